// Loads Main.qml offscreen with the fake service (beside the remote one, as in the app): every
// page instantiates without QML warnings, a message streams into the chat view, and the
// language switches at run time.
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QtQml/QQmlExtensionPlugin>

#include "app/appcontext.h"
#include "app/studio.h"
#include "services/combinedinferenceservice.h"
#include "services/fakeinferenceservice.h"

Q_IMPORT_QML_PLUGIN(ExlStudioPlugin)

namespace {
QStringList g_warnings;

void collectWarnings(QtMsgType type, const QMessageLogContext &, const QString &message)
{
    if (type != QtDebugMsg && type != QtInfoMsg)
        g_warnings.append(message);
}

// Items under `root` (visual tree) that have a property `name` (e.g. the VRAM meters' `gpu`).
int countItemsWith(QQuickItem *root, const char *name)
{
    int n = root->property(name).isValid() ? 1 : 0;
    for (QQuickItem *child : root->childItems())
        n += countItemsWith(child, name);
    return n;
}
}  // namespace

class QmlSmokeTest : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<AppContext> m_context;
    std::unique_ptr<QQmlApplicationEngine> m_engine;

    QQuickWindow *window() const
    {
        return m_engine->rootObjects().isEmpty() ? nullptr : qobject_cast<QQuickWindow *>(m_engine->rootObjects().constFirst());
    }

private Q_SLOTS:
    void initTestCase()
    {
        QQuickStyle::setStyle(QStringLiteral("Material"));
        AppOptions options;
        options.dataDir = m_dir.path();
        constexpr qint64 kGiB = 1024LL * 1024 * 1024;
        m_context = std::make_unique<AppContext>(
            options,
            std::make_unique<CombinedInferenceService>(
                std::make_unique<FakeInferenceService>(QStringLiteral("cuda:0"), FakeTiming{0, 0, 1, 0, 1}),
                std::make_unique<RemoteInferenceService>()),
            std::make_unique<FakeVramPlanner>(24 * kGiB, 936e9), true);
        m_engine = std::make_unique<QQmlApplicationEngine>();
        qInstallMessageHandler(collectWarnings);
        QVERIFY(loadMainWindow(*m_engine, *m_context));
        QVERIFY2(g_warnings.isEmpty(), qPrintable(g_warnings.join('\n')));
    }

    void everyPageShowsWithoutWarnings()
    {
        for (const char *page : {"models", "telemetry", "settings", "chat"}) {
            QVERIFY(QMetaObject::invokeMethod(window(), "showPage", Q_ARG(QVariant, QString::fromLatin1(page))));
            QCoreApplication::processEvents();
        }
        QVERIFY(window()->grabWindow().width() > 0);
        QVERIFY2(g_warnings.isEmpty(), qPrintable(g_warnings.join('\n')));
    }

    void messageStreamsIntoView()
    {
        ModelManager *models = m_context->models();
        QSignalSpy loaded(models, &ModelManager::loadedModelChanged);
        models->load();
        QVERIFY(loaded.wait(10000));
        ChatViewModel *chat = m_context->chat();
        QSignalSpy finished(chat, &ChatViewModel::replyFinished);
        QVERIFY(chat->send(QStringLiteral("Hello from the smoke test")));
        QVERIFY(finished.wait(10000));
        QCOMPARE(chat->rowCount(), 2);
        QCOMPARE(m_context->conversations()->rowCount(), 1);
        // Telemetry reached the model behind the graph, and the telemetry page draws a VRAM meter
        // per GPU: the simulated engine's card and the second card it reports.
        QVERIFY(m_context->telemetry()->boundTokensPerSecond() > 0);
        QCOMPARE(m_context->telemetry()->gpus().size(), 2);
        QVERIFY(QMetaObject::invokeMethod(window(), "showPage", Q_ARG(QVariant, QStringLiteral("telemetry"))));
        QCoreApplication::processEvents();
        QCOMPARE(countItemsWith(window()->contentItem(), "gpu"), 2);
        QVERIFY2(g_warnings.isEmpty(), qPrintable(g_warnings.join('\n')));
    }

    void switchesLanguageAtRunTime()
    {
        m_context->settings()->setLanguage(QStringLiteral("nl"));
        QCOMPARE(QCoreApplication::translate("Main", "Settings"), QStringLiteral("Instellingen"));
        m_context->settings()->setLanguage(QStringLiteral("de"));
        QCOMPARE(QCoreApplication::translate("Main", "Settings"), QStringLiteral("Einstellungen"));
        m_context->settings()->setLanguage(QStringLiteral("en"));
        QCOMPARE(QCoreApplication::translate("Main", "Settings"), QStringLiteral("Settings"));
        QCoreApplication::processEvents();
        QVERIFY2(g_warnings.isEmpty(), qPrintable(g_warnings.join('\n')));
    }

    void cleanupTestCase()
    {
        qInstallMessageHandler(nullptr);
        m_engine.reset();
        m_context.reset();
    }
};

QTEST_MAIN(QmlSmokeTest)
#include "ui_qmlsmoke_test.moc"
