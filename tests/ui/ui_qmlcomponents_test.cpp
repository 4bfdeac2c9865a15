// Qt Quick Test runner for the QML components (tests/ui/qml/tst_*.qml): the app's QML module
// (ExlStudio, linked in statically) is importable from the tests.
#include <QQmlEngine>
#include <QtQml/QQmlExtensionPlugin>
#include <QtQuickTest>

Q_IMPORT_QML_PLUGIN(ExlStudioPlugin)

class Setup : public QObject
{
    Q_OBJECT
public Q_SLOTS:
    void qmlEngineAvailable(QQmlEngine *engine) { engine->addImportPath(QStringLiteral("qrc:/")); }
};

QUICK_TEST_MAIN_WITH_SETUP(ui_qmlcomponents_test, Setup)

#include "ui_qmlcomponents_test.moc"
