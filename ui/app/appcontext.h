// Everything the QML scene needs, built once: the chat store, the inference service, the view
// models, the translator. QML reaches it as the root's `app` property.
#pragma once
#include <QObject>
#include <QPointer>
#include <QTranslator>
#include <QtQml/qqmlregistration.h>
#include <memory>
#include <qcoro/qcorotask.h>

#include "app/appoptions.h"
#include "services/vramplanner.h"
#include "storage/chatstore.h"
#include "viewmodels/chatviewmodel.h"
#include "viewmodels/conversationlistmodel.h"
#include "viewmodels/hubdownload.h"
#include "viewmodels/hubviewmodel.h"
#include "viewmodels/modelmanager.h"
#include "viewmodels/remoteendpointsmodel.h"
#include "viewmodels/settingsviewmodel.h"
#include "viewmodels/telemetrymodel.h"

class InferenceService;
class QQmlEngine;

class AppContext : public QObject
{
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("Created by the application")
    Q_PROPERTY(ChatViewModel *chat READ chat CONSTANT)
    Q_PROPERTY(ConversationListModel *conversations READ conversations CONSTANT)
    Q_PROPERTY(ModelManager *models READ models CONSTANT)
    Q_PROPERTY(RemoteEndpointsModel *remotes READ remotes CONSTANT)
    Q_PROPERTY(SettingsViewModel *settings READ settings CONSTANT)
    Q_PROPERTY(TelemetryModel *telemetry READ telemetry CONSTANT)
    Q_PROPERTY(HubViewModel *hub READ hub CONSTANT)
    Q_PROPERTY(QString deviceName READ deviceName CONSTANT)
    Q_PROPERTY(bool onCpu READ onCpu CONSTANT)
    Q_PROPERTY(QString deviceNote READ deviceNote CONSTANT)
    Q_PROPERTY(bool simulated READ simulated CONSTANT)
    Q_PROPERTY(QString storageError READ storageError CONSTANT)
    Q_PROPERTY(QString initialPage READ initialPage CONSTANT)
    Q_PROPERTY(QString version READ version CONSTANT)
    Q_PROPERTY(QString defaultModelsDirectory READ defaultModelsDirectory CONSTANT)
    Q_PROPERTY(QStringList otherModelFolders READ otherModelFolders NOTIFY otherModelFoldersChanged)
public:
    // Uses `service` and `planner` (the fake today; the engine-backed one once wired).
    AppContext(const AppOptions &options, std::unique_ptr<InferenceService> service,
               std::unique_ptr<VramPlanner> planner, bool simulated, QObject *parent = nullptr);
    ~AppContext() override;

    // The app as it ships: the engine on the requested device (auto: the GPU when the CUDA
    // module loads, else the CPU); with --fake the simulated engine.
    static std::unique_ptr<AppContext> createDefault(const AppOptions &options);
    static std::unique_ptr<AppContext> createSimulated(const AppOptions &options);
    // Model folders listed by default: the models directory (setting, else <data dir>/models),
    // the folders the user added, and the fixture models of a source checkout.
    QStringList modelFolders() const;
    // <data dir>/models: the models folder unless the settings name another.
    QString defaultModelsDirectory() const;
    // The folders searched besides the settings' ones: the fixture models of a source checkout
    // and folders given for this run only (--model).
    QStringList otherModelFolders() const;
    static QString defaultDataDir();

    ChatViewModel *chat() const { return m_chat.get(); }
    ConversationListModel *conversations() const { return m_conversations.get(); }
    ModelManager *models() const { return m_models.get(); }
    // The remote endpoints; null when `service` cannot reach remote models.
    RemoteEndpointsModel *remotes() const { return m_remotes.get(); }
    SettingsViewModel *settings() const { return m_settings.get(); }
    TelemetryModel *telemetry() const { return m_telemetry.get(); }
    // The Hugging Face Hub tab (search, a repository's variants with their fit, downloads).
    HubViewModel *hub() const { return m_hub.get(); }
    // The Hub as the app speaks to it: the environment (HF_ENDPOINT, HF_HOME, HF_HUB_OFFLINE,
    // HF_TOKEN) with the token saved in Settings in place of HF_TOKEN's.
    exl::hub::HubConfig hubConfig() const;
    InferenceService *service() const { return m_service.get(); }
    QString deviceName() const;
    bool onCpu() const;
    QString deviceNote() const;
    bool simulated() const { return m_simulated; }
    QString storageError() const { return m_storageError; }
    QString initialPage() const { return m_options.page.isEmpty() ? QStringLiteral("chat") : m_options.page; }
    QString version() const;

Q_SIGNALS:
    void otherModelFoldersChanged();
    // The window should show this page ("chat", "models", ...), e.g. where a start-up error is shown.
    void pageRequested(const QString &name);

public:
    // Installs the translator on `engine` and follows language changes from then on.
    void attach(QQmlEngine *engine);
    // The start-up steps asked for on the command line (load a model, send a prompt).
    QCoro::Task<> start();

private:
    void applyLanguage();
    // A finished Hub download: the model folders scanned again, the new model selected.
    QCoro::Task<> selectDownloaded(QString path);

    AppOptions m_options;
    QString m_dataDir;
    QStringList m_runFolders;  // listed for this run only (the --model folder's parent)
    bool m_simulated;
    QString m_storageError;
    std::unique_ptr<InferenceService> m_service;
    ChatStore m_store;
    std::unique_ptr<SettingsViewModel> m_settings;
    std::unique_ptr<ChatViewModel> m_chat;
    std::unique_ptr<ConversationListModel> m_conversations;
    std::unique_ptr<ModelManager> m_models;
    std::unique_ptr<RemoteEndpointsModel> m_remotes;
    std::unique_ptr<TelemetryModel> m_telemetry;
    std::unique_ptr<HubDownload> m_hubDownload;
    std::unique_ptr<HubViewModel> m_hub;
    QTranslator m_translator;
    QTranslator m_qtTranslator;  // Qt's own strings
    QPointer<QQmlEngine> m_engine;
};
