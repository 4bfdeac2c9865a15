// A first start through the real window (Main.qml over the real AppContext, the engine on the
// CPU), driven with the keyboard and the mouse as a new user would: no model anywhere, so the
// Models page shows how to get one; the user sets a models folder that sorts its models into
// subfolders (models/exl2/ref-s-4.0bpw), the model appears, Enter on it in the list loads it, a
// message typed into the chat gets a reply. Started again on the same data folder, the app lists
// the model and the chat again.
#include <QDir>
#include <QFile>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QtQml/QQmlExtensionPlugin>
#include <memory>

#include "app/appcontext.h"
#include "app/studio.h"
#include "layoutprobe.h"

Q_IMPORT_QML_PLUGIN(ExlStudioPlugin)

namespace {
QString fixturesDir()
{
    const QString env = qEnvironmentVariable("EXL_FIXTURES");
    return env.isEmpty() ? QStringLiteral(EXL_DEFAULT_FIXTURES) : env;
}

// The first visible item under `root` whose objectName or accessible name is `name`.
QQuickItem *findItem(QQuickItem *root, const QString &name)
{
    if (!root || !root->isVisible())
        return nullptr;
    if (root->objectName() == name || root->property("text").toString() == name)
        return root;
    for (QQuickItem *child : root->childItems())
        if (QQuickItem *found = findItem(child, name))
            return found;
    return nullptr;
}

// Types `text` into the focused item, key by key (QTest has keyClicks for widgets only).
void type(QWindow *window, const QString &text)
{
    for (const QChar c : text)
        QTest::keyClick(window, c.toLatin1());
}

void click(QQuickWindow *window, QQuickItem *item)
{
    const QPointF centre = layoutprobe::sceneRect(item).center();
    QTest::mouseClick(window, Qt::LeftButton, Qt::NoModifier, centre.toPoint());
}
}  // namespace

class FirstRunTest : public QObject
{
    Q_OBJECT

    QTemporaryDir m_data;       // chats and settings
    QTemporaryDir m_models;     // the user's models folder: exl2/ref-s-4.0bpw inside
    QTemporaryDir m_noFixtures; // EXL_FIXTURES: no fixture models listed by themselves
    QString m_modelSource;
    std::unique_ptr<AppContext> m_context;
    std::unique_ptr<QQmlApplicationEngine> m_engine;

    QQuickWindow *window() const
    {
        return m_engine && !m_engine->rootObjects().isEmpty() ? qobject_cast<QQuickWindow *>(m_engine->rootObjects().constFirst()) : nullptr;
    }
    QQuickItem *item(const QString &name) const { return findItem(window()->contentItem(), name); }

    void startApp()
    {
        AppOptions options;
        options.dataDir = m_data.path();
        options.device = QStringLiteral("cpu");
        m_context = AppContext::createDefault(options);
        m_engine = std::make_unique<QQmlApplicationEngine>();
        QVERIFY(loadMainWindow(*m_engine, *m_context));
        window()->resize(1024, 600);
        m_context->start();
        QVERIFY(QTest::qWaitForWindowExposed(window()));
        QTRY_VERIFY_WITH_TIMEOUT(!m_context->models()->scanning(), 30000);
    }
    void showPage(const char *page)
    {
        QVERIFY(QMetaObject::invokeMethod(window(), "showPage", Q_ARG(QVariant, QString::fromLatin1(page))));
        QTest::qWait(50);
    }

    // Copies a model folder's files (the fixture is read-only).
    static bool copyFolder(const QString &from, const QString &to)
    {
        if (!QDir().mkpath(to))
            return false;
        for (const QString &name : QDir(from).entryList(QDir::Files))
            if (!QFile::copy(QDir(from).filePath(name), QDir(to).filePath(name)))
                return false;
        return true;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_modelSource = QDir(fixturesDir()).filePath(QStringLiteral("models/exl2/ref-s-4.0bpw"));
        if (!QFileInfo::exists(QDir(m_modelSource).filePath(QStringLiteral("config.json")))) {
            if (qEnvironmentVariable("EXL_REQUIRE_FIXTURES") == QLatin1String("1"))
                QFAIL(qPrintable(QStringLiteral("fixture model missing: %1 (EXL_REQUIRE_FIXTURES=1)").arg(m_modelSource)));
            QSKIP(qPrintable(QStringLiteral("fixture model missing: %1 (set EXL_FIXTURES)").arg(m_modelSource)));
        }
        QVERIFY(m_data.isValid() && m_models.isValid() && m_noFixtures.isValid());
        QVERIFY(copyFolder(m_modelSource, QDir(m_models.path()).filePath(QStringLiteral("exl2/ref-s-4.0bpw"))));
        QVERIFY(QDir().mkpath(QDir(m_models.path()).filePath(QStringLiteral("hf/empty-folder"))));
        qputenv("EXL_FIXTURES", m_noFixtures.path().toUtf8());
        QQuickStyle::setStyle(QStringLiteral("Material"));
        startApp();
    }

    void noModelShowsHowToGetOne()
    {
        QCOMPARE(m_context->models()->rowCount(), 0);
        showPage("models");
        QQuickItem *pane = item(QStringLiteral("firstRunPane"));
        QVERIFY(pane);
        QVERIFY(pane->isVisible());
        QVERIFY(!item(QStringLiteral("loadButton"))->isEnabled());
        // One way is the Hugging Face Hub: its button opens the Hugging Face tab, whose search field
        // has the keyboard; the first tab leads back.
        QQuickItem *findOnHub = item(QStringLiteral("findOnHubButton"));
        QVERIFY(findOnHub);
        click(window(), findOnHub);
        QTRY_VERIFY(item(QStringLiteral("hubSearchPanel")));
        QTRY_VERIFY(item(QStringLiteral("hubRepoPanel")));
        QTRY_VERIFY(item(QStringLiteral("hubSearchField"))->hasActiveFocus());
        QVERIFY(!item(QStringLiteral("firstRunPane")));
        QCOMPARE(window()->findChild<QObject *>(QStringLiteral("sourceTabs"))->property("currentIndex").toInt(), 2);
        window()->findChild<QObject *>(QStringLiteral("sourceTabs"))->setProperty("currentIndex", 0);
        QTRY_VERIFY(item(QStringLiteral("firstRunPane")));
        // The chat page says what to do, and Enter sends nothing.
        showPage("chat");
        QCOMPARE(m_context->chat()->rowCount(), 0);
    }

    void nestedModelsFolderIsSearched()
    {
        showPage("models");
        // The folders dialog: the models folder typed into its field.
        QQuickItem *folders = item(QStringLiteral("foldersButton"));
        QVERIFY(folders);
        click(window(), folders);
        QObject *dialog = window()->findChild<QObject *>(QStringLiteral("modelFoldersDialog"));
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->property("opened").toBool());
        auto *content = qvariant_cast<QQuickItem *>(dialog->property("contentItem"));
        QQuickItem *field = findItem(content, QStringLiteral("modelsDirField"));
        QVERIFY(field);
        click(window(), field);
        QTRY_VERIFY(field->hasActiveFocus());
        type(window(), m_models.path());
        QTest::keyClick(window(), Qt::Key_Tab);  // editing finished
        QTRY_COMPARE(m_context->settings()->modelsDirectory(), QDir::cleanPath(m_models.path()));
        QTest::keyClick(window(), Qt::Key_Escape);
        QTRY_VERIFY(!dialog->property("visible").toBool());
        QTRY_VERIFY_WITH_TIMEOUT(!m_context->models()->scanning() && m_context->models()->rowCount() == 1, 30000);
        QCOMPARE(m_context->models()->data(m_context->models()->index(0), ModelManager::NameRole).toString(),
                 QStringLiteral("ref-s-4.0bpw"));
    }

    void enterInTheListLoadsAndTheChatReplies()
    {
        showPage("models");
        QQuickItem *list = item(QStringLiteral("modelList"));
        QVERIFY(list);
        // Tab into the list as a keyboard user would, then Enter.
        list->forceActiveFocus(Qt::TabFocusReason);
        QTRY_VERIFY(list->hasActiveFocus());
        QSignalSpy loaded(m_context->models(), &ModelManager::loadedModelChanged);
        QTest::keyClick(window(), Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(m_context->models()->loadedModelName() == QStringLiteral("ref-s-4.0bpw"), 60000);

        showPage("chat");
        QQuickItem *input = item(QStringLiteral("messageField"));
        QVERIFY(input);
        click(window(), input);
        QTRY_VERIFY(input->hasActiveFocus());
        // A short reply keeps the test quick (the fixture model writes until its context is full).
        SamplingSettings sampling = m_context->settings()->sampling();
        sampling.maxNewTokens = 24;
        m_context->chat()->setSampling(sampling);
        QSignalSpy finished(m_context->chat(), &ChatViewModel::replyFinished);
        type(window(), QStringLiteral("Tell me a short story."));
        QTest::keyClick(window(), Qt::Key_Return);
        QVERIFY(finished.wait(120000));
        QCOMPARE(m_context->chat()->rowCount(), 2);
        QVERIFY(!m_context->chat()->data(m_context->chat()->index(1), ChatViewModel::TextRole).toString().isEmpty());
        QCOMPARE(m_context->conversations()->rowCount(), 1);
    }

    void restartKeepsTheFolderAndTheChat()
    {
        m_engine.reset();
        m_context.reset();
        startApp();
        QCOMPARE(m_context->settings()->modelsDirectory(), QDir::cleanPath(m_models.path()));
        QCOMPARE(m_context->models()->rowCount(), 1);
        QCOMPARE(m_context->conversations()->rowCount(), 1);
    }

    void cleanupTestCase()
    {
        m_engine.reset();
        m_context.reset();
        qunsetenv("EXL_FIXTURES");
    }
};

QTEST_MAIN(FirstRunTest)
#include "ui_firstrun_test.moc"
