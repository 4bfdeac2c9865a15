#include "appoptions.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QHash>
#include <QRegularExpression>

AppOptions parseAppOptions(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QCoreApplication::translate("main", "Chat with local EXL2 models."));
    parser.addHelpOption();
    const QCommandLineOption version(QStringLiteral("version"), QCoreApplication::translate("main", "Show the version."));
    const QCommandLineOption model(QStringLiteral("model"), QCoreApplication::translate("main", "Load the model in DIR at start."), QStringLiteral("DIR"));
    const QCommandLineOption device(QStringLiteral("device"), QCoreApplication::translate("main", "Run on cpu or cuda[:N]."), QStringLiteral("DEVICE"));
    const QCommandLineOption lang(QStringLiteral("lang"), QCoreApplication::translate("main", "Interface language: en, nl or de."), QStringLiteral("LANG"));
    const QCommandLineOption theme(QStringLiteral("theme"), QCoreApplication::translate("main", "Theme: light or dark."), QStringLiteral("THEME"));
    const QCommandLineOption dataDir(QStringLiteral("data-dir"), QCoreApplication::translate("main", "Keep chats and settings in DIR."), QStringLiteral("DIR"));
    const QCommandLineOption page(QStringLiteral("page"), QCoreApplication::translate("main", "Open PAGE first: chat, models, hub (the models page's Hugging Face tab), telemetry or settings."), QStringLiteral("PAGE"));
    const QCommandLineOption screenshot(QStringLiteral("screenshot"), QCoreApplication::translate("main", "Write a PNG of the window to FILE and quit."), QStringLiteral("FILE"));
    const QCommandLineOption demoPrompt(QStringLiteral("demo-prompt"), QCoreApplication::translate("main", "Send TEXT as a message at start."), QStringLiteral("TEXT"));
    const QCommandLineOption quitAfter(QStringLiteral("quit-after"), QCoreApplication::translate("main", "Quit after MS milliseconds."), QStringLiteral("MS"));
    const QCommandLineOption size(QStringLiteral("size"), QCoreApplication::translate("main", "Open the window at WxH pixels, e.g. 1024x600."), QStringLiteral("WxH"));
    const QCommandLineOption dialog(QStringLiteral("dialog"), QCoreApplication::translate("main", "Open the dialog NAME at start: about, convert, folders or default-model."), QStringLiteral("NAME"));
    const QCommandLineOption hubRepo(QStringLiteral("hub-repo"), QCoreApplication::translate("main", "Show the Hugging Face tab with a search and the page of the Hub repository REPO (ORG/NAME)."), QStringLiteral("REPO"));
    const QCommandLineOption checkDialogs(QStringLiteral("check-dialogs"), QCoreApplication::translate("main", "Open and close every dialog, then quit: 0 when each opened (a check of the installed QML modules)."));
    const QCommandLineOption fake(QStringList{QStringLiteral("fake"), QStringLiteral("simulated")}, QCoreApplication::translate("main", "Use the simulated engine instead of the real one."));
    parser.addOptions({version, fake, model, device, lang, theme, dataDir, page, screenshot, demoPrompt, quitAfter, size, dialog, hubRepo, checkDialogs});

    AppOptions out;
    if (!parser.parse(arguments)) {
        out.error = parser.errorText();
        return out;
    }
    if (parser.isSet(QStringLiteral("help"))) {
        out.showHelp = true;
        out.helpText = parser.helpText();
        return out;
    }
    out.checkDialogs = parser.isSet(checkDialogs);
    out.showVersion = parser.isSet(version);
    out.fake = parser.isSet(fake);
    out.modelPath = parser.value(model);
    out.device = parser.value(device);
    out.language = parser.value(lang);
    out.theme = parser.value(theme);
    out.dataDir = parser.value(dataDir);
    out.page = parser.value(page);
    out.hubRepo = parser.value(hubRepo);
    if (!out.hubRepo.isEmpty() && out.page.isEmpty())
        out.page = QStringLiteral("hub");
    out.screenshotPath = parser.value(screenshot);
    out.demoPrompt = parser.value(demoPrompt);
    out.quitAfterMs = parser.value(quitAfter).toInt();
    if (parser.isSet(size)) {
        static const QRegularExpression sizeRe(QStringLiteral("^(\\d{3,5})x(\\d{3,5})$"));
        const auto m = sizeRe.match(parser.value(size));
        if (m.hasMatch())
            out.windowSize = QSize(m.captured(1).toInt(), m.captured(2).toInt());
        else
            out.error = QCoreApplication::translate("main", "Unknown size '%1': use WxH, e.g. 1024x600.").arg(parser.value(size));
    }
    if (parser.isSet(dialog)) {
        static const QHash<QString, QString> dialogs{{QStringLiteral("about"), QStringLiteral("aboutDialog")},
                                                    {QStringLiteral("convert"), QStringLiteral("convertDialog")},
                                                    {QStringLiteral("folders"), QStringLiteral("modelFoldersDialog")},
                                                    {QStringLiteral("default-model"), QStringLiteral("defaultModelDialog")}};
        out.openDialog = dialogs.value(parser.value(dialog));
        if (out.openDialog.isEmpty())
            out.error = QCoreApplication::translate("main", "Unknown dialog '%1': use about, convert, folders or default-model.").arg(parser.value(dialog));
    }

    static const QRegularExpression deviceRe(QStringLiteral("^(cpu|cuda(:\\d+)?)$"));
    if (!out.device.isEmpty() && !deviceRe.match(out.device).hasMatch())
        out.error = QCoreApplication::translate("main", "Unknown device '%1': use cpu or cuda[:N].").arg(out.device);
    if (!out.language.isEmpty() && !QStringList{"en", "nl", "de"}.contains(out.language))
        out.error = QCoreApplication::translate("main", "Unknown language '%1': use en, nl or de.").arg(out.language);
    if (!out.theme.isEmpty() && !QStringList{"light", "dark", "system"}.contains(out.theme))
        out.error = QCoreApplication::translate("main", "Unknown theme '%1': use light or dark.").arg(out.theme);
    if (!out.page.isEmpty() && !QStringList{"chat", "models", "hub", "telemetry", "settings"}.contains(out.page))
        out.error = QCoreApplication::translate("main", "Unknown page '%1'.").arg(out.page);
    return out;
}
