#include "studio.h"

#include <QApplication>
#include <QQmlApplicationEngine>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QTimer>
#include <cstdio>

#include "app/appcontext.h"

namespace {
constexpr int kDefaultScreenshotDelayMs = 1500;

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

int runStudio(QApplication &app)
{
    const AppOptions options = parseAppOptions(app.arguments());
    if (!options.error.isEmpty()) {
        std::fprintf(stderr, "%s\n", qPrintable(options.error));
        return 2;
    }
    if (options.showVersion) {
        std::printf("exl-studio %s\n", qPrintable(QCoreApplication::applicationVersion()));
        return 0;
    }

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
