// The real app (Main.qml over the real AppContext: the engine on the CPU, the fixture models
// listed, no model loaded) as a new user meets it, at 1024×600, 1280×800 and 1920×1080, in
// English, Dutch and German, in the light and dark themes: on every page and in every dialog,
// each visible control lies inside its window, dialog and scroll area once scrolled to, is what a
// click at its middle reaches, and shows its text whole (layoutprobe); the convert dialog in both
// its formats (EXL3, as it opens, and EXL2). Every file and folder dialog opens and closes. Nothing
// prints a QML warning. Runs under Xvfb where it is installed.
#include <QDir>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QTemporaryDir>
#include <QTest>
#include <QtQuickTest/quicktest.h>
#include <QtQml/QQmlExtensionPlugin>
#include <memory>
#include <utility>
#include <vector>

#include "app/appcontext.h"
#include "app/studio.h"
#include "hubtestserver.h"
#include "layoutprobe.h"

Q_IMPORT_QML_PLUGIN(ExlStudioPlugin)

namespace {
QStringList g_warnings;
QtMessageHandler g_previous = nullptr;

void collectWarnings(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    if (type == QtWarningMsg || type == QtCriticalMsg || type == QtFatalMsg) {
        // Messages of the platform (no session bus, no XDG runtime folder) are not the app's.
        const QString category = QString::fromLatin1(context.category ? context.category : "");
        if (!category.startsWith(QLatin1String("qt.qpa")) && !message.startsWith(QLatin1String("QStandardPaths")))
            g_warnings.append(message);
    }
    if (g_previous && type != QtWarningMsg)
        g_previous(type, context, message);
}

struct Size {
    int width, height;
};
constexpr Size kSizes[] = {{1024, 600}, {1280, 800}, {1920, 1080}};
const char *const kLanguages[] = {"en", "nl", "de"};
const char *const kThemes[] = {"light", "dark"};
const char *const kPages[] = {"chat", "models", "telemetry", "settings"};
// The app's dialogs (objectName), opened from their pages.
const char *const kDialogs[] = {"aboutDialog", "convertDialog", "modelFoldersDialog", "defaultModelDialog",
                                "confirmRemoveEndpoint", "renameDialog", "deleteDialog", "switchDialog"};
// Every file and folder dialog (objectName).
const char *const kFileDialogs[] = {"addFolderDialog", "templateFileDialog", "inputFolderDialog", "ggufDialog",
                                    "outputFolderDialog", "modelsDirDialog", "exportDialog"};
}  // namespace

class LayoutTest : public QObject
{
    Q_OBJECT

    QTemporaryDir m_data;
    QTemporaryDir m_emptyFixtures;
    QTemporaryDir m_hfHome;     // an empty Hugging Face cache
    HubTestServer m_hubServer;  // the Hugging Face tab's search results and repository page
    std::unique_ptr<AppContext> m_context;
    std::unique_ptr<QQmlApplicationEngine> m_engine;

    QQuickWindow *window() const
    {
        return m_engine && !m_engine->rootObjects().isEmpty() ? qobject_cast<QQuickWindow *>(m_engine->rootObjects().constFirst()) : nullptr;
    }
    QObject *find(const char *objectName) const
    {
        return window()->findChild<QObject *>(QString::fromLatin1(objectName));
    }

    // Starts the app as `exl-studio --device cpu` would, with its chats and settings in a
    // temporary folder.
    void startApp()
    {
        AppOptions options;
        options.dataDir = m_data.path();
        options.device = QStringLiteral("cpu");
        m_context = AppContext::createDefault(options);
        m_engine = std::make_unique<QQmlApplicationEngine>();
        QVERIFY(loadMainWindow(*m_engine, *m_context));
        m_context->start();
        QVERIFY(QTest::qWaitForWindowExposed(window()));
        QTRY_VERIFY_WITH_TIMEOUT(!m_context->models()->scanning(), 30000);
    }
    void stopApp()
    {
        m_engine.reset();
        m_context.reset();
    }

    // Lets layouts and bindings settle, and draws a frame: the pending events are handled, then
    // the items waiting to be polished are (QQuickTest::qWaitForPolish), then a frame is grabbed
    // (polish, sync and render). No fixed sleep: the app's QML has no animation that moves a
    // control, and a dialog is checked once `opened` (after its transition). `ms`: also wait that
    // long first (a file dialog, which may be a window of its own).
    void settle(int ms = 0)
    {
        if (ms > 0)
            QTest::qWait(ms);
        QCoreApplication::processEvents();
        QVERIFY(QQuickTest::qWaitForPolish(window(), 5000));
        window()->grabWindow();
        QCoreApplication::processEvents();
    }

    void apply(Size size, const char *language, const char *theme)
    {
        window()->resize(size.width, size.height);
        m_context->settings()->overrideLanguage(QString::fromLatin1(language));
        m_context->settings()->overrideTheme(QString::fromLatin1(theme));
        // The window system confirms the new size asynchronously.
        QTRY_VERIFY_WITH_TIMEOUT(window()->width() == size.width && window()->height() == size.height, 5000);
        settle();
        QCOMPARE(window()->width(), size.width);
        QCOMPARE(window()->height(), size.height);
    }

    void showPage(const char *page)
    {
        QVERIFY(QMetaObject::invokeMethod(window(), "showPage", Q_ARG(QVariant, QString::fromLatin1(page))));
        settle();
    }

    // Opens a popup (a Dialog) and checks its scene; closes it again.
    QStringList checkDialog(const char *name, const QString &context)
    {
        QObject *dialog = find(name);
        if (!dialog)
            return {context + QStringLiteral(": no dialog %1").arg(QString::fromLatin1(name))};
        QMetaObject::invokeMethod(dialog, "open");
        if (!QTest::qWaitFor([&] { return dialog->property("opened").toBool(); }, 3000))
            return {context + QStringLiteral(": %1 did not open").arg(QString::fromLatin1(name))};
        // Two frames: a control's text changed while the dialog was hidden (a language switch)
        // is measured again when it is first polished.
        settle();
        settle();
        auto *content = qvariant_cast<QQuickItem *>(dialog->property("contentItem"));
        QStringList faults;
        if (!content || !content->parentItem())
            faults << context + QStringLiteral(": %1 has no content").arg(QString::fromLatin1(name));
        else
            faults << layoutprobe::checkScene(window(), content->parentItem(), context + QStringLiteral(" / ") + QString::fromLatin1(name));
        QMetaObject::invokeMethod(dialog, "close");
        if (!QTest::qWaitFor([&] { return !dialog->property("visible").toBool(); }, 3000))
            faults << context + QStringLiteral(": %1 did not close").arg(QString::fromLatin1(name));
        return faults;
    }

    // The convert dialog's job switched to `format` ("exl2" / "exl3"); false if it has none.
    bool setConvertFormat(const char *format)
    {
        QObject *dialog = find("convertDialog");
        auto *job = dialog ? qvariant_cast<QObject *>(dialog->property("job")) : nullptr;
        if (!job || !job->setProperty("format", QString::fromLatin1(format)))
            return false;
        settle();
        return job->property("format").toString() == QLatin1String(format);
    }

    static void failOn(const QStringList &faults)
    {
        if (!faults.isEmpty()) {
            const int shown = std::min<int>(int(faults.size()), 60);
            QFAIL(qPrintable(QStringLiteral("%1 layout faults:\n").arg(faults.size()) + faults.mid(0, shown).join('\n')));
        }
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_data.isValid());
        QQuickStyle::setStyle(QStringLiteral("Material"));
        g_previous = qInstallMessageHandler(collectWarnings);
        // The Hugging Face tab talks to the Hub-protocol test server.
        qputenv("HF_HOME", m_hfHome.path().toUtf8());
        QString error;
        const QString fixtures = qEnvironmentVariable("EXL_FIXTURES", QStringLiteral(EXL_DEFAULT_FIXTURES));
        QVERIFY2(m_hubServer.start(QStringLiteral(EXL_PYTHON), QStringLiteral(EXL_HUB_SERVER), fixtures, &error), qPrintable(error));
        qputenv("HF_ENDPOINT", m_hubServer.endpoint().toUtf8());
        startApp();
        // A search's results and a repository's page with its variants and their fit.
        // Every format, so the list holds both formats' rows (the server's 3 EXL2 repositories and its EXL3 one).
        HubViewModel *hub = m_context->hub();
        hub->setFormatFilter(0);
        hub->search();
        QTRY_VERIFY_WITH_TIMEOUT(hub->searched() && !hub->searching(), 15000);
        QVERIFY2(hub->results().size() == 4, qPrintable(QStringLiteral("%1 results; %2").arg(hub->results().size()).arg(hub->searchError())));
        hub->openRepo(QStringLiteral("exl-test/ref-s-exl2"));
        QTRY_VERIFY_WITH_TIMEOUT(!hub->repoLoading(), 30000);
        QCOMPARE(hub->variants().size(), 3);
        QVERIFY2(m_context->models()->rowCount() > 0, "the fixture models are listed (EXL_FIXTURES / ../shared/fixtures)");
        QVERIFY2(g_warnings.isEmpty(), qPrintable(g_warnings.join('\n')));
    }

    void everyPageAndDialog_data()
    {
        QTest::addColumn<int>("size");
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("theme");
        for (int s = 0; s < int(std::size(kSizes)); ++s)
            for (const char *language : kLanguages)
                for (const char *theme : kThemes)
                    QTest::addRow("%dx%d %s %s", kSizes[s].width, kSizes[s].height, language, theme)
                        << s << QString::fromLatin1(language) << QString::fromLatin1(theme);
    }
    void everyPageAndDialog()
    {
        QFETCH(int, size);
        QFETCH(QString, language);
        QFETCH(QString, theme);
        apply(kSizes[size], qPrintable(language), qPrintable(theme));
        QStringList faults;
        const QString context = QStringLiteral("%1x%2 %3 %4").arg(kSizes[size].width).arg(kSizes[size].height).arg(language, theme);
        for (const char *page : kPages) {
            showPage(page);
            faults << layoutprobe::checkScene(window(), window()->contentItem(), context + QStringLiteral(" / ") + QString::fromLatin1(page));
        }
        // The Models page's second source tab: the remote endpoints and the form that adds one.
        showPage("models");
        if (QObject *tabs = find("sourceTabs")) {
            tabs->setProperty("currentIndex", 1);
            settle();
            faults << layoutprobe::checkScene(window(), window()->contentItem(), context + QStringLiteral(" / models: remote endpoints"));
            if (QObject *form = find("endpointForm")) {
                form->setProperty("visible", true);
                settle();
                faults << layoutprobe::checkScene(window(), window()->contentItem(), context + QStringLiteral(" / models: endpoint form"));
                form->setProperty("visible", false);
            } else {
                faults << context + QStringLiteral(": no endpoint form");
            }
            // The third: the Hugging Face search and a repository's page.
            tabs->setProperty("currentIndex", 2);
            settle();
            faults << layoutprobe::checkScene(window(), window()->contentItem(), context + QStringLiteral(" / models: Hugging Face"));
            tabs->setProperty("currentIndex", 0);
            settle();
        } else {
            faults << context + QStringLiteral(": no source tabs on the Models page");
        }
        for (const char *dialog : kDialogs)
            faults << checkDialog(dialog, context);
        // The convert dialog opens on EXL3; its EXL2 form (other head bits, Fast shown) too.
        if (setConvertFormat("exl2"))
            faults << checkDialog("convertDialog", context + QStringLiteral(" EXL2"));
        else
            faults << context + QStringLiteral(": the convert dialog's format cannot be set");
        QVERIFY(setConvertFormat("exl3"));
        failOn(faults);
        QVERIFY2(g_warnings.isEmpty(), qPrintable(g_warnings.join('\n')));
    }

    // Every enabled control of every page, and of the dialogs, can be reached with Tab (and so
    // used without a mouse), in English and German at the smallest size.
    void keyboardReachesEveryControl_data()
    {
        QTest::addColumn<QString>("language");
        QTest::newRow("en") << QStringLiteral("en");
        QTest::newRow("de") << QStringLiteral("de");
    }
    void keyboardReachesEveryControl()
    {
        QFETCH(QString, language);
        apply(kSizes[0], qPrintable(language), "light");
        QStringList faults;
        for (const char *page : kPages) {
            showPage(page);
            faults << layoutprobe::checkKeyboard(window(), window()->contentItem(), language + QStringLiteral(" / ") + QString::fromLatin1(page));
        }
        showPage("models");
        QObject *tabs = find("sourceTabs");
        QVERIFY(tabs);
        tabs->setProperty("currentIndex", 2);
        settle();
        faults << layoutprobe::checkKeyboard(window(), window()->contentItem(), language + QStringLiteral(" / models: Hugging Face"));
        tabs->setProperty("currentIndex", 0);
        settle();
        // Every dialog as it opens, then the convert dialog's EXL2 form (Fast shown) as well.
        std::vector<std::pair<const char *, const char *>> dialogs;
        for (const char *name : kDialogs)
            dialogs.emplace_back(name, nullptr);
        dialogs.emplace_back("convertDialog", "exl2");
        for (const auto &[name, format] : dialogs) {
            if (format)
                QVERIFY(setConvertFormat(format));
            QObject *dialog = find(name);
            QVERIFY(dialog);
            QMetaObject::invokeMethod(dialog, "open");
            QTRY_VERIFY(dialog->property("opened").toBool());
            settle();
            auto *content = qvariant_cast<QQuickItem *>(dialog->property("contentItem"));
            faults << layoutprobe::checkKeyboard(window(), content->parentItem(),
                                                 language + QStringLiteral(" / ") + QString::fromLatin1(name) +
                                                     (format ? QStringLiteral(" ") + QString::fromLatin1(format) : QString()));
            QMetaObject::invokeMethod(dialog, "close");
            QTRY_VERIFY(!dialog->property("visible").toBool());
        }
        QVERIFY(setConvertFormat("exl3"));
        failOn(faults);
        QVERIFY2(g_warnings.isEmpty(), qPrintable(g_warnings.join('\n')));
    }

    // Each file and folder dialog opens (its own window or popup shows) and closes again, in
    // each language, without a crash or a warning.
    void fileDialogsOpenAndClose_data()
    {
        QTest::addColumn<QString>("language");
        for (const char *language : kLanguages)
            QTest::newRow(language) << QString::fromLatin1(language);
    }
    void fileDialogsOpenAndClose()
    {
        QFETCH(QString, language);
        apply(kSizes[1], qPrintable(language), "light");
        showPage("models");
        for (const char *name : kFileDialogs) {
            QObject *dialog = find(name);
            QVERIFY2(dialog, name);
            QVERIFY(QMetaObject::invokeMethod(dialog, "open"));
            QTRY_VERIFY2_WITH_TIMEOUT(dialog->property("visible").toBool(), name, 3000);
            settle(100);
            QVERIFY(QMetaObject::invokeMethod(dialog, "reject"));
            QTRY_VERIFY2_WITH_TIMEOUT(!dialog->property("visible").toBool(), name, 3000);
            settle();
        }
        QVERIFY2(g_warnings.isEmpty(), qPrintable(g_warnings.join('\n')));
    }

    // A first start with no model anywhere: the Models page says how to get one, at the smallest
    // size, in every language, and its controls pass the same checks.
    void firstRunWithoutModels()
    {
        stopApp();
        QVERIFY(m_emptyFixtures.isValid());
        qputenv("EXL_FIXTURES", m_emptyFixtures.path().toUtf8());
        startApp();
        QCOMPARE(m_context->models()->rowCount(), 0);
        QStringList faults;
        for (const char *language : kLanguages) {
            apply(kSizes[0], language, "light");
            showPage("models");
            QObject *pane = find("firstRunPane");
            QVERIFY(pane);
            QVERIFY(pane->property("visible").toBool());
            faults << layoutprobe::checkScene(window(), window()->contentItem(), QStringLiteral("first run %1").arg(QString::fromLatin1(language)));
            showPage("chat");
            faults << layoutprobe::checkScene(window(), window()->contentItem(), QStringLiteral("first run chat %1").arg(QString::fromLatin1(language)));
        }
        failOn(faults);
        qunsetenv("EXL_FIXTURES");
        QVERIFY2(g_warnings.isEmpty(), qPrintable(g_warnings.join('\n')));
    }

    void cleanupTestCase()
    {
        stopApp();
        qInstallMessageHandler(g_previous);
    }
};

QTEST_MAIN(LayoutTest)
#include "ui_layout_test.moc"
