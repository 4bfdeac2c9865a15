// Qt Quick Test runner for the QML components (tests/ui/qml/tst_*.qml): the app's QML module
// (ExlStudio, linked in statically) is importable from the tests, and `testChat` is a
// ChatViewModel on the simulated engine with a model loaded (for ChatInput).
#include <QQmlContext>
#include <QQmlEngine>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtQml/QQmlExtensionPlugin>
#include <QtQuickTest>

#include <memory>

#include "services/fakeinferenceservice.h"
#include "storage/chatstore.h"
#include "viewmodels/chatviewmodel.h"

Q_IMPORT_QML_PLUGIN(ExlStudioPlugin)

class Setup : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    std::unique_ptr<FakeInferenceService> m_service;
    std::unique_ptr<ChatStore> m_store;
    std::unique_ptr<ChatViewModel> m_chat;

public Q_SLOTS:
    void qmlEngineAvailable(QQmlEngine *engine)
    {
        engine->addImportPath(QStringLiteral("qrc:/"));
        // A slow reply (20 tokens/s) so that a test sees the input in its busy state.
        m_service = std::make_unique<FakeInferenceService>(QStringLiteral("cuda:0"), FakeTiming{0, 20.0, 1, 0, 1});
        QSignalSpy loaded(m_service.get(), &InferenceService::loadFinished);
        m_service->loadModel(QStringLiteral("/models/fake/Qwen2.5-1.5B-Instruct-exl2-8.0bpw"), {});
        if (!loaded.wait(10000))
            qFatal("the simulated engine did not load its model");
        m_store = std::make_unique<ChatStore>();
        if (!m_store->open(m_dir.filePath(QStringLiteral("chats.sqlite"))))
            qFatal("no chat database");
        m_chat = std::make_unique<ChatViewModel>(m_service.get(), m_store.get());
        engine->rootContext()->setContextProperty(QStringLiteral("testChat"), m_chat.get());
    }
    void cleanupTestCase()
    {
        m_chat.reset();
        m_store.reset();
        m_service.reset();
    }
};

QUICK_TEST_MAIN_WITH_SETUP(ui_qmlcomponents_test, Setup)

#include "ui_qmlcomponents_test.moc"
