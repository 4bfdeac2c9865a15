// Command-line options of exl-studio, for users, scripts and tests.
#pragma once
#include <QSize>
#include <QString>
#include <QStringList>

struct AppOptions {
    QString modelPath;       // --model DIR: load at start
    QString device;          // --device cpu|cuda[:N]; empty: the best available
    QString language;        // --lang en|nl|de; empty: the saved setting
    QString theme;           // --theme light|dark; empty: the saved setting
    QString dataDir;         // --data-dir DIR: chats and settings
    QString page;            // --page chat|models|hub|telemetry|settings: the page shown first
    QString screenshotPath;  // --screenshot FILE: write a PNG of the window, then quit
    QString demoPrompt;      // --demo-prompt TEXT: send a message at start (screenshots)
    int quitAfterMs = 0;     // --quit-after MS
    QSize windowSize;        // --size WxH: the window's size (default: 1280x800 or the screen's free area)
    QString hubRepo;         // --hub-repo ORG/NAME: the Hugging Face tab with this repository's page (screenshots)
    QString openDialog;      // --dialog NAME: open this dialog (objectName) at start (screenshots)
    bool showVersion = false;
    bool showHelp = false;   // --help: `helpText` is printed (no display needed)
    QString helpText;
    bool checkDialogs = false;  // --check-dialogs: open and close every dialog, then quit (packaging check)
    bool fake = false;       // --fake: the simulated engine (demos, tests, screenshots)
    QString error;           // non-empty: the options were invalid
};

// Parses `arguments` (argv, program name first).
AppOptions parseAppOptions(const QStringList &arguments);
