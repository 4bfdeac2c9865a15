#include "studio.h"

#include <QApplication>
#include <QQmlApplicationEngine>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QElapsedTimer>
#include <QThread>
#include <QTimer>
#include <cstdio>
#include <functional>

#ifdef Q_OS_UNIX
#include <QSocketNotifier>
#include <csignal>
#include <sys/socket.h>
#include <unistd.h>
#endif

#include "app/appcontext.h"
#include "exl/version.h"

namespace {
constexpr int kDefaultScreenshotDelayMs = 1500;

#ifdef Q_OS_UNIX
// SIGTERM / SIGINT / SIGHUP quit through the event loop (the same clean shutdown as closing the
// window: the worker stops, chats are closed), via a socket pair the handler writes one byte to.
int g_signalFds[2] = {-1, -1};

void onQuitSignal(int)
{
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = ::write(g_signalFds[0], &byte, 1);
}

void quitOnSignals(QCoreApplication &app)
{
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, g_signalFds) != 0)
        return;
    auto *notifier = new QSocketNotifier(g_signalFds[1], QSocketNotifier::Read, &app);
    QObject::connect(notifier, &QSocketNotifier::activated, &app, [notifier] {
        notifier->setEnabled(false);
        char byte = 0;
        [[maybe_unused]] const ssize_t n = ::read(g_signalFds[1], &byte, 1);
        QCoreApplication::quit();
    });
    struct sigaction action = {};
    action.sa_handler = onQuitSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    for (const int sig : {SIGTERM, SIGINT, SIGHUP})
        ::sigaction(sig, &action, nullptr);
}
#endif

void scheduleScreenshot(QQmlApplicationEngine &engine, const QString &path, int delayMs)
{
    QTimer::singleShot(delayMs, &engine, [&engine, path] {
        auto *window = engine.rootObjects().isEmpty() ? nullptr : qobject_cast<QQuickWindow *>(engine.rootObjects().constFirst());
        const QImage image = window ? window->grabWindow() : QImage();
        if (image.isNull() || !image.save(path)) {
            std::fprintf(stderr, "exl-studio: could not write the screenshot %s\n", qPrintable(path));
            QCoreApplication::exit(1);
            return;
        }
        QCoreApplication::quit();
    });
}

// --check-dialogs: opens every dialog of the window in turn (the app's own, and each file and
// folder dialog, which need Qt.labs.folderlistmodel and QtCore), waits until it shows, closes it,
// and says so. A missing QML module shows as a dialog that never opens, or as a QML warning.
QStringList g_dialogWarnings;
QtMessageHandler g_previousHandler = nullptr;

void recordWarning(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    if (type == QtWarningMsg || type == QtCriticalMsg)
        g_dialogWarnings.append(message);
    if (g_previousHandler)
        g_previousHandler(type, context, message);
}

bool waitFor(const std::function<bool()> &done, int ms)
{
    QElapsedTimer clock;
    clock.start();
    while (!done()) {
        if (clock.elapsed() > ms)
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        QThread::msleep(5);
    }
    return true;
}

int checkDialogs(QQmlApplicationEngine &engine)
{
    auto *window = engine.rootObjects().isEmpty() ? nullptr : engine.rootObjects().constFirst();
    if (!window)
        return 1;
    int failed = 0;
    for (const char *name : {"aboutDialog", "convertDialog", "modelFoldersDialog", "defaultModelDialog", "addFolderDialog", "templateFileDialog",
                             "inputFolderDialog", "ggufDialog", "outputFolderDialog", "modelsDirDialog", "exportDialog"}) {
        QObject *dialog = window->findChild<QObject *>(QString::fromLatin1(name));
        const int warningsBefore = int(g_dialogWarnings.size());
        const bool opened = dialog && QMetaObject::invokeMethod(dialog, "open")
                            && waitFor([dialog] { return dialog->property("visible").toBool(); }, 5000);
        waitFor([] { return false; }, 300);  // let it draw
        const bool closed = opened && QMetaObject::invokeMethod(dialog, "close")
                            && waitFor([dialog] { return !dialog->property("visible").toBool(); }, 5000);
        const bool quiet = g_dialogWarnings.size() == warningsBefore;
        std::printf("dialog %-20s %s\n", name, !dialog ? "MISSING" : !opened ? "did not open" : !closed ? "did not close"
                                                : !quiet ? "warned" : "ok");
        failed += !(opened && closed && quiet);
    }
    for (const QString &w : std::as_const(g_dialogWarnings))
        std::printf("warning: %s\n", qPrintable(w));
    std::fflush(stdout);
    return failed == 0 && g_dialogWarnings.isEmpty() ? 0 : 1;
}
}  // namespace

QQuickWindow *loadMainWindow(QQmlApplicationEngine &engine, AppContext &context)
{
    engine.addImportPath(QStringLiteral("qrc:/"));  // the ExlStudio module's qmldir
    context.attach(&engine);
    engine.setInitialProperties({{QStringLiteral("app"), QVariant::fromValue(&context)}});
    engine.load(QUrl(QStringLiteral("qrc:/ExlStudio/qml/Main.qml")));
    return engine.rootObjects().isEmpty() ? nullptr : qobject_cast<QQuickWindow *>(engine.rootObjects().constFirst());
}

int printHelp(int argc, char *argv[])
{
    QStringList arguments;
    for (int i = 0; i < argc; ++i)
        arguments.append(QString::fromLocal8Bit(argv[i]));
    std::fputs(qPrintable(parseAppOptions(arguments).helpText), stdout);
    return 0;
}

int printVersion()
{
    std::fputs(exl::version_report("exl-studio").c_str(), stdout);
    std::printf("Qt:                  %s\n", qVersion());
    return 0;
}

int runStudio(QApplication &app)
{
    const AppOptions options = parseAppOptions(app.arguments());
    if (options.showHelp) {
        std::fputs(qPrintable(options.helpText), stdout);
        return 0;
    }
    if (!options.error.isEmpty()) {
        std::fprintf(stderr, "%s\n", qPrintable(options.error));
        return 2;
    }
    if (options.showVersion)
        return printVersion();

#ifdef Q_OS_UNIX
    // First, so a SIGTERM during start-up (model scan, QML load) is not lost: the byte waits in
    // the socket pair until the event loop runs, then quits it cleanly.
    quitOnSignals(app);
#endif
    QQuickStyle::setStyle(QStringLiteral("Material"));
    std::unique_ptr<AppContext> context = AppContext::createDefault(options);
    if (options.checkDialogs)
        g_previousHandler = qInstallMessageHandler(recordWarning);
    QQmlApplicationEngine engine;
    QQuickWindow *const mainWindow = loadMainWindow(engine, *context);
    if (!mainWindow)
        return 1;

    if (options.windowSize.isValid())
        mainWindow->resize(options.windowSize);
    context->start();
    if (!options.openDialog.isEmpty()) {
        // After the pages have laid out (the dialog centres on the window).
        QTimer::singleShot(300, &engine, [&engine, name = options.openDialog] {
            if (QObject *dialog = engine.rootObjects().constFirst()->findChild<QObject *>(name))
                QMetaObject::invokeMethod(dialog, "open");
            else
                std::fprintf(stderr, "exl-studio: no dialog %s\n", qPrintable(name));
        });
    }
    if (options.checkDialogs) {
        QTimer::singleShot(500, &app, [&engine] { QCoreApplication::exit(checkDialogs(engine)); });
        return app.exec();
    }
    if (!options.screenshotPath.isEmpty())
        scheduleScreenshot(engine, options.screenshotPath,
                           options.quitAfterMs > 0 ? options.quitAfterMs : kDefaultScreenshotDelayMs);
    else if (options.quitAfterMs > 0)
        QTimer::singleShot(options.quitAfterMs, &app, &QCoreApplication::quit);
    return app.exec();
}
