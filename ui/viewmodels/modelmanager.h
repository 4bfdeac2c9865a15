// The models page: the list of model folders, the selection, load/unload with progress and
// errors, and the load settings (context length, cache type, draft model and draft tokens) with
// the VRAM fit readout from the VramPlanner. Model folders are scanned by a ModelScanner on its
// worker thread; the results are applied here, on the GUI thread.
#pragma once
#include <QAbstractListModel>
#include <QPointer>
#include <QtQml/qqmlregistration.h>
#include <memory>
#include <qcoro/qcorotask.h>

#include "services/inferencetypes.h"
#include "services/vramplanner.h"

class InferenceService;
class ModelScanner;
struct ModelScanResult;

class ModelManager : public QAbstractListModel
{
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("Created by the application")
    Q_PROPERTY(int currentIndex READ currentIndex WRITE setCurrentIndex NOTIFY currentIndexChanged)
    Q_PROPERTY(double bpw READ bpw WRITE setBpw NOTIFY settingsChanged)
    Q_PROPERTY(int contextLength READ contextLength WRITE setContextLength NOTIFY settingsChanged)
    Q_PROPERTY(int maxContextLength READ maxContextLength NOTIFY currentIndexChanged)
    Q_PROPERTY(int cacheType READ cacheType WRITE setCacheType NOTIFY settingsChanged)
    Q_PROPERTY(QStringList cacheTypeNames READ cacheTypeNames CONSTANT)
    Q_PROPERTY(int draftTokens READ draftTokens WRITE setDraftTokens NOTIFY settingsChanged)
    // Layers over several GPUs: "" (one GPU), "auto" or GiB per GPU "20,23"; takes effect at the
    // next load. gpuSplitError: why the last text given was not taken (empty: it was).
    Q_PROPERTY(QString gpuSplit READ gpuSplit WRITE setGpuSplit NOTIFY settingsChanged)
    Q_PROPERTY(QString gpuSplitError READ gpuSplitError NOTIFY settingsChanged)
    Q_PROPERTY(QStringList draftModelNames READ draftModelNames NOTIFY draftModelsChanged)
    Q_PROPERTY(int draftModelIndex READ draftModelIndex WRITE setDraftModelIndex NOTIFY draftModelsChanged)
    Q_PROPERTY(QString draftModelName READ draftModelName NOTIFY draftModelsChanged)
    Q_PROPERTY(QVariantMap fit READ fit NOTIFY fitChanged)
    Q_PROPERTY(bool loading READ loading NOTIFY loadingChanged)
    Q_PROPERTY(double loadProgress READ loadProgress NOTIFY loadProgressChanged)
    Q_PROPERTY(QString loadedModelName READ loadedModelName NOTIFY loadedModelChanged)
    // Where the loaded model runs: its endpoint's name for a remote model (empty for a local one).
    Q_PROPERTY(QString loadedEndpoint READ loadedEndpoint NOTIFY loadedModelChanged)
    Q_PROPERTY(QString loadError READ loadError NOTIFY loadErrorChanged)
    Q_PROPERTY(QString loadNotice READ loadNotice NOTIFY loadedModelChanged)
    Q_PROPERTY(QStringList modelFolders READ modelFolders NOTIFY modelFoldersChanged)
    Q_PROPERTY(bool scanning READ scanning NOTIFY scanningChanged)
    Q_PROPERTY(QString deviceName READ deviceName CONSTANT)
    Q_PROPERTY(bool onCpu READ onCpu CONSTANT)
    Q_PROPERTY(QString chatTemplateOverride READ chatTemplateOverride WRITE setChatTemplateOverride NOTIFY chatTemplateChanged)
    Q_PROPERTY(QString modelChatTemplate READ modelChatTemplate NOTIFY chatTemplateChanged)
    Q_PROPERTY(bool currentIsRemote READ currentIsRemote NOTIFY currentIndexChanged)
    Q_PROPERTY(QString currentName READ currentName NOTIFY currentIndexChanged)
public:
    enum Roles { NameRole = Qt::UserRole + 1, PathRole, ArchitectureRole, ParametersRole, BpwRole, HeadBitsRole,
                 SizeRole, NativeContextRole, LoadedRole, RemoteRole, EndpointRole, NoteRole };

    ModelManager(InferenceService *service, std::unique_ptr<VramPlanner> planner, QObject *parent = nullptr);
    ~ModelManager() override;

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    int currentIndex() const { return m_currentIndex; }
    void setCurrentIndex(int index);
    double bpw() const { return m_bpw; }
    void setBpw(double bpw);
    int contextLength() const { return m_options.contextLength; }
    void setContextLength(int tokens);
    int maxContextLength() const;
    int cacheType() const { return int(m_options.cacheKind); }
    void setCacheType(int type);
    QStringList cacheTypeNames() const;
    int draftTokens() const { return m_options.draftTokens; }
    void setDraftTokens(int count);
    QString gpuSplit() const { return m_options.gpuSplit; }
    void setGpuSplit(const QString &text);
    QString gpuSplitError() const { return m_gpuSplitError; }

    // The draft model for speculative decoding. Offered for the selected model: the other local
    // models whose vocabulary equals its own (what the engine accepts as a draft), smallest first;
    // never the model itself. The choice is kept per model; none means that drafted tokens come
    // from n-gram lookup in the conversation.
    QStringList draftModelNames() const;
    QStringList draftModelPaths() const;
    int draftModelIndex() const;  // into draftModelNames(); -1: none (n-gram lookup)
    void setDraftModelIndex(int index);
    QString draftModelName() const;  // empty: none
    QString draftModelPath() const;  // empty: none
    // Chooses the selected model's draft model by folder path (empty: none). False when that
    // folder is not offered for the selected model.
    Q_INVOKABLE bool setDraftModelPath(const QString &path);
    // The chosen draft models by model folder path, as the settings keep them.
    void setDraftModels(const QHash<QString, QString> &choices);

    QVariantMap fit() const { return m_fit; }
    // The fit bar's map for any model folder (e.g. the header-only copy of a Hub model not
    // downloaded yet) at `contextLength` and `cache`, on this machine's device, without a draft model.
    QVariantMap fitFor(const ModelInfo &model, int contextLength, CacheKind cache) const;
    bool loading() const { return m_loading; }
    double loadProgress() const { return m_loadProgress; }
    QString loadedModelName() const { return m_loaded ? m_loaded->name : QString(); }
    QString loadedEndpoint() const { return m_loaded && m_loaded->remote ? m_loaded->endpointName : QString(); }
    QString loadError() const { return m_loadError; }
    QString loadNotice() const { return m_loadNotice; }
        void setMaxChunkSize(int tokens) { m_options.maxChunkSize = tokens; }

    // Where model folders are found: each folder is listed when it is a model folder itself,
    // and so is each model folder directly inside it. The service's own models come first.
    // Setting them starts a scan; the list follows when it has finished.
    QStringList modelFolders() const { return m_folders; }
    void setModelFolders(const QStringList &folders);
    // Adds a folder (a path or a file:// URL, e.g. from a drop or a folder dialog) once a scan
    // of it has found a model folder: folderAdded() then asks for it to be remembered, else
    // folderRejected() says that it holds none.
    Q_INVOKABLE void addFolder(const QString &pathOrUrl) { addModelFolder(pathOrUrl); }
    // The same; the returned task completes with the outcome.
    QCoro::Task<bool> addModelFolder(const QString &pathOrUrl);
    // Looks at the folders again (models added or removed on disk), off the GUI thread.
    Q_INVOKABLE void refresh();
    // A scan of the folders is under way (the list shows the last one's models meanwhile).
    bool scanning() const { return m_scanRequest != 0; }
    // Completes once no scan of the folders is under way (at once when none is).
    QCoro::Task<> scanned();
    // Replaces the scanner (tests: one that records where it runs, or waits).
    void setScanner(std::unique_ptr<ModelScanner> scanner);
    QString deviceName() const;
    bool onCpu() const;
    // The selected model is served by a remote endpoint (no load settings, no VRAM fit).
    bool currentIsRemote() const { return m_currentIndex >= 0 && m_models.at(m_currentIndex).remote; }
    QString currentName() const { return m_currentIndex >= 0 ? m_models.at(m_currentIndex).name : QString(); }
    // What the next load uses, the selected model's chat template override included.
    LoadOptions loadOptions() const;

    // The selected model's chat template: the user's override (empty: none, the model's own is
    // used) and the model's own from tokenizer_config.json (empty: it ships none, and the built-in
    // ChatML format is the fallback). An override applies from the next load.
    QString chatTemplateOverride() const;
    void setChatTemplateOverride(const QString &text);
    QString modelChatTemplate() const;
    // Reads a template file (a path or a file:// URL) as the selected model's override.
    Q_INVOKABLE bool loadChatTemplateFile(const QString &pathOrUrl);
    // The overrides by model folder path, as the settings keep them.
    void setChatTemplateOverrides(const QHash<QString, QString> &overrides);

    // Loads the selected model; the returned task completes when the load has finished.
    Q_INVOKABLE void load() { loadSelected(); }
    QCoro::Task<bool> loadSelected();
    Q_INVOKABLE void unload();
    Q_INVOKABLE int indexOfPath(const QString &path) const;
    // The interface language changed: the rows' words (notes) are read again.
    void retranslate() { if (!m_models.isEmpty()) Q_EMIT dataChanged(index(0), index(int(m_models.size()) - 1)); }
    // Says why a model could not be loaded where the user looks for it (the load error under
    // Load), e.g. a --model folder that holds no model.
    void reportLoadError(const QString &message) { setLoadError(message); }

Q_SIGNALS:
    void currentIndexChanged();
    void settingsChanged();
    void fitChanged();
    void loadingChanged();
    void loadProgressChanged();
    void loadedModelChanged();
    void loadErrorChanged();
    void modelFoldersChanged();
    void folderAdded(const QString &path);
    void folderRejected(const QString &pathOrUrl);
    void scanningChanged();
    void chatTemplateChanged();
    void draftModelsChanged();
    // The user chose the draft model (empty path: none) of the model at modelPath.
    void draftModelEdited(const QString &modelPath, const QString &draftPath);
    // The user set (or cleared, with empty text) the override of the model at modelPath.
    void chatTemplateOverrideEdited(const QString &modelPath, const QString &text);

private:
    QString m_gpuSplitError;
    void onScanFinished(const ModelScanResult &result);
    // The list: the service's models, then those the last scan found.
    void applyModels();
    void updateFit();
    static QVariantMap fitMap(const VramPlan &plan, int contextLength, int draftTokens);
    void updateDraftChoices();
    void setLoading(bool loading);
    void setLoadError(const QString &message);

    QPointer<InferenceService> m_service;
    std::unique_ptr<VramPlanner> m_planner;
    QList<ModelInfo> m_models;
    int m_currentIndex = -1;
    double m_bpw = 0.0;
    LoadOptions m_options;
    QVariantMap m_fit;
    bool m_loading = false;
    double m_loadProgress = 0.0;
    std::optional<ModelInfo> m_loaded;
    QString m_loadError;
    QString m_loadNotice;
    QStringList m_folders;
    std::unique_ptr<ModelScanner> m_scanner;
    quint64 m_scanRequest = 0;    // the scan of m_folders under way; 0: none
    QList<ModelInfo> m_scanned;   // what the last scan of m_folders found
    QHash<QString, QString> m_chatTemplates;  // model folder path -> template text
    QList<ModelInfo> m_draftChoices;          // offered for the selected model
    QHash<QString, QString> m_draftModels;    // model folder path -> draft model folder path
};
