// exl-studio: chat with local EXL2 models. The app lives in the exl_ui library.
#include <QApplication>
#include <QtQml/QQmlExtensionPlugin>

#include "app/studio.h"

Q_IMPORT_QML_PLUGIN(ExlStudioPlugin)

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);  // QApplication: Qt Charts draws through the widgets module
    QApplication::setApplicationName(QStringLiteral("exl-studio"));
    QApplication::setApplicationVersion(QStringLiteral(EXL_STUDIO_VERSION));
    return runStudio(app);
}
