// exl-studio: chat with local EXL2 models. The app lives in the exl_ui library.
#include <QApplication>
#include <QIcon>
#include <QtQml/QQmlExtensionPlugin>
#include <cstring>

#include "app/studio.h"

Q_IMPORT_QML_PLUGIN(ExlStudioPlugin)

int main(int argc, char *argv[])
{
    // --version and --help before QApplication: they need no display.
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--version") == 0)
            return printVersion();
        if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "-?") == 0)
            return printHelp(argc, argv);
    }
    QApplication app(argc, argv);  // QApplication: Qt Charts draws through the widgets module
    QApplication::setApplicationName(QStringLiteral("exl-studio"));
    QApplication::setApplicationVersion(QStringLiteral(EXL_STUDIO_VERSION));
    // The installed desktop entry and icon (packaging/): window managers match the window to them.
    QApplication::setDesktopFileName(QStringLiteral("org.exlstudio.ExlStudio"));
    QApplication::setWindowIcon(QIcon::fromTheme(QStringLiteral("org.exlstudio.ExlStudio")));
    return runStudio(app);
}
