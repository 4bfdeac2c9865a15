#include "studio.h"

#include <QApplication>
#include <QQmlApplicationEngine>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QTimer>
#include <cstdio>

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
}  // namespace

int printVersion()
{
    std::fputs(exl::version_report("exl-studio").c_str(), stdout);
    std::printf("Qt:                  %s\n", qVersion());
    return 0;
}

int runStudio(QApplication &app)
{
    const AppOptions options = parseAppOptions(app.arguments());
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
    QQmlApplicationEngine engine;
    engine.addImportPath(QStringLiteral("qrc:/"));  // the ExlStudio module's qmldir
    context->attach(&engine);
    engine.setInitialProperties({{QStringLiteral("app"), QVariant::fromValue(context.get())}});
    engine.load(QUrl(QStringLiteral("qrc:/ExlStudio/qml/Main.qml")));
    if (engine.rootObjects().isEmpty())
        return 1;

    context->start();
    if (!options.screenshotPath.isEmpty())
        scheduleScreenshot(engine, options.screenshotPath,
                           options.quitAfterMs > 0 ? options.quitAfterMs : kDefaultScreenshotDelayMs);
    else if (options.quitAfterMs > 0)
        QTimer::singleShot(options.quitAfterMs, &app, &QCoreApplication::quit);
    return app.exec();
}
