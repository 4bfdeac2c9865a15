// Runs exl-studio in an existing QApplication: options, the QML scene, the start-up steps,
// and the --screenshot / --quit-after helpers used by scripts, tests and CI.
#pragma once

class AppContext;
class QApplication;
class QQmlApplicationEngine;
class QQuickWindow;

// Loads Main.qml into `engine` over `context` as exl-studio does (the ExlStudio module's import
// path, the context's translator, the root's `app` property); the window, or null when the scene
// did not load. The tests and the GUI benchmark load the app through this too.
QQuickWindow *loadMainWindow(QQmlApplicationEngine &engine, AppContext &context);

int runStudio(QApplication &app);

// Prints what `exl-studio --version` shows (build, CUDA setup found, Qt) and returns 0; needs no
// QApplication (no display).
int printVersion();
// Prints the command-line help (`exl-studio --help`) and returns 0; needs no QApplication.
int printHelp(int argc, char *argv[]);
