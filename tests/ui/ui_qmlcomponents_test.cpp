// Qt Quick Test runner for the QML components (tests/ui/qml/tst_*.qml): the app's QML module
// (ExlStudio, linked in statically) is importable from the tests. Each test file gets fresh
// objects, in a folder of its own:
//   testChat           a ChatViewModel on the simulated engine with a model loaded (ChatInput,
//                      MessageBubble)
//   testConversations  a ConversationListModel over testChat's chat store (ConversationSidebar)
//   testEndpoints      a RemoteEndpointsModel over a RemoteInferenceService (RemoteEndpointsPanel)
//   testTelemetry      a TelemetryModel (ThroughputChart)
//   testApp            a simulated AppContext (SettingsPage)
//   testHelper         what QML cannot do itself: store conversations, feed telemetry samples,
//                      read the clipboard and testApp's sampling settings
#include <QApplication>
#include <QLocale>
#include <QClipboard>
#include <QDir>
#include <QGuiApplication>
#include <QQmlContext>
#include <QQmlEngine>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtQml/QQmlExtensionPlugin>
#include <QtQuickTest>

#include <memory>

#include "app/appcontext.h"
#include "services/fakeinferenceservice.h"
#include "services/remoteinferenceservice.h"
#include "storage/chatstore.h"
#include "viewmodels/chatviewmodel.h"
#include "viewmodels/conversationlistmodel.h"
#include "viewmodels/remoteendpointsmodel.h"
#include "viewmodels/telemetrymodel.h"

Q_IMPORT_QML_PLUGIN(ExlStudioPlugin)

class TestHelper : public QObject
{
    Q_OBJECT
public:
    TestHelper(ChatStore *store, ConversationListModel *conversations, TelemetryModel *telemetry, AppContext *app)
        : m_store(store)
        , m_conversations(conversations)
        , m_telemetry(telemetry)
        , m_app(app)
    {
    }

    // Stores a conversation (newest first in the list) and returns its id.
    Q_INVOKABLE qint64 addConversation(const QString &title)
    {
        const qint64 id = m_store->createConversation(title);
        m_conversations->refresh();
        return id;
    }
    // The stored title (empty: no such conversation).
    Q_INVOKABLE QString storedTitle(qint64 id) const { return m_store->conversation(id).title; }
    // One telemetry sample, as the inference service publishes it.
    Q_INVOKABLE void addTelemetry(double timeSeconds, double decodeTokensPerSecond, double boundTokensPerSecond)
    {
        TelemetrySample sample;
        sample.timeSeconds = timeSeconds;
        sample.decodeTokensPerSecond = decodeTokensPerSecond;
        sample.boundTokensPerSecond = boundTokensPerSecond;
        m_telemetry->addSample(sample);
    }
    // The draft-token count testApp's chat asks for with each request.
    Q_INVOKABLE int appChatDraftTokens() const { return m_app->chat()->sampling().draftTokens; }
    Q_INVOKABLE void clearClipboard() const { QGuiApplication::clipboard()->clear(); }
    Q_INVOKABLE QString clipboardText() const { return QGuiApplication::clipboard()->text(); }

private:
    ChatStore *m_store;
    ConversationListModel *m_conversations;
    TelemetryModel *m_telemetry;
    AppContext *m_app;
};

class Setup : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    int m_files = 0;
    std::unique_ptr<FakeInferenceService> m_service;
    std::unique_ptr<ChatStore> m_store;
    std::unique_ptr<ChatViewModel> m_chat;
    std::unique_ptr<ConversationListModel> m_conversations;
    std::unique_ptr<RemoteInferenceService> m_remote;
    std::unique_ptr<RemoteEndpointsModel> m_endpoints;
    std::unique_ptr<TelemetryModel> m_telemetry;
    std::unique_ptr<AppContext> m_app;
    std::unique_ptr<TestHelper> m_helper;

    // Users before what they use.
    void reset()
    {
        m_helper.reset();
        m_app.reset();
        m_telemetry.reset();
        m_endpoints.reset();
        m_remote.reset();
        m_conversations.reset();
        m_chat.reset();
        m_store.reset();
        m_service.reset();
    }

public Q_SLOTS:
    // Called for each test file, with that file's engine.
    void qmlEngineAvailable(QQmlEngine *engine)
    {
        reset();
        const QString dir = m_dir.filePath(QString::number(++m_files));
        QDir().mkpath(dir);
        engine->addImportPath(QStringLiteral("qrc:/"));
        // A slow reply (20 tokens/s) so that a test sees the input in its busy state.
        m_service = std::make_unique<FakeInferenceService>(QStringLiteral("cuda:0"), FakeTiming{0, 20.0, 1, 0, 1});
        QSignalSpy loaded(m_service.get(), &InferenceService::loadFinished);
        m_service->loadModel(QStringLiteral("/models/fake/Qwen2.5-1.5B-Instruct-exl2-8.0bpw"), {});
        if (!loaded.wait(10000))
            qFatal("the simulated engine did not load its model");
        m_store = std::make_unique<ChatStore>();
        if (!m_store->open(QDir(dir).filePath(QStringLiteral("chats.sqlite"))))
            qFatal("no chat database");
        m_chat = std::make_unique<ChatViewModel>(m_service.get(), m_store.get());
        m_conversations = std::make_unique<ConversationListModel>(m_store.get());
        m_remote = std::make_unique<RemoteInferenceService>();
        m_endpoints = std::make_unique<RemoteEndpointsModel>(m_remote.get(),
                                                             QDir(dir).filePath(QStringLiteral("remote-endpoints.json")));
        m_telemetry = std::make_unique<TelemetryModel>();
        AppOptions options;
        options.dataDir = QDir(dir).filePath(QStringLiteral("app"));
        m_app = AppContext::createSimulated(options);
        m_helper = std::make_unique<TestHelper>(m_store.get(), m_conversations.get(), m_telemetry.get(), m_app.get());

        QQmlContext *context = engine->rootContext();
        context->setContextProperty(QStringLiteral("testChat"), m_chat.get());
        context->setContextProperty(QStringLiteral("testConversations"), m_conversations.get());
        context->setContextProperty(QStringLiteral("testEndpoints"), m_endpoints.get());
        context->setContextProperty(QStringLiteral("testTelemetry"), m_telemetry.get());
        context->setContextProperty(QStringLiteral("testApp"), m_app.get());
        context->setContextProperty(QStringLiteral("testHelper"), m_helper.get());
    }
    void cleanupTestCase() { reset(); }
};

// QUICK_TEST_MAIN_WITH_SETUP, with a QApplication made first (the runner then uses it instead of
// a QGuiApplication): Qt Charts' ChartView (ThroughputChart) draws through QGraphicsView.
int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    // Numbers as the app writes them in English (it sets the default locale from its language).
    QLocale::setDefault(QLocale(QLocale::English));
    QTEST_SET_MAIN_SOURCE_PATH
    Setup setup;
    return quick_test_main_with_setup(argc, argv, "ui_qmlcomponents_test", QUICK_TEST_SOURCE_DIR, &setup);
}

#include "ui_qmlcomponents_test.moc"
