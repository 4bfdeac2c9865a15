// Runs exl-studio in an existing QApplication: options, the QML scene, the start-up steps,
// and the --screenshot / --quit-after helpers used by scripts, tests and CI.
#pragma once

class QApplication;

int runStudio(QApplication &app);

// Prints what `exl-studio --version` shows (build, CUDA setup found, Qt) and returns 0; needs no
// QApplication (no display).
int printVersion();
// Prints the command-line help (`exl-studio --help`) and returns 0; needs no QApplication.
int printHelp(int argc, char *argv[]);
