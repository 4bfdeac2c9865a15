// SettingsViewModel: values persist across instances, are clamped, and presets apply; the app
// restores the draft-token count of speculative decoding from them at startup.
#include <QDir>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "app/appcontext.h"
#include "viewmodels/chatviewmodel.h"
#include "viewmodels/modelmanager.h"
#include "viewmodels/settingsviewmodel.h"

class SettingsViewModelTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void persists()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("settings.ini"));
        {
            SettingsViewModel settings(path);
            settings.setTemperature(1.3);
            settings.setTopK(12);
            settings.setSeed(1234);
            settings.setTheme(QStringLiteral("dark"));
            settings.setLanguage(QStringLiteral("de"));
            settings.setFontSize(14);
            settings.setMaxChunkSize(512);
            settings.setDraftTokens(3);
        }
        SettingsViewModel again(path);
        QCOMPARE(again.temperature(), 1.3);
        QCOMPARE(again.topK(), 12);
        QCOMPARE(again.seed(), 1234);
        QCOMPARE(again.sampling().seed, 1234);
        QCOMPARE(again.theme(), QStringLiteral("dark"));
        QCOMPARE(again.language(), QStringLiteral("de"));
        QCOMPARE(again.fontSize(), 14);
        QCOMPARE(again.maxChunkSize(), 512);
        QCOMPARE(again.draftTokens(), 3);
    }

    // The longest reply: default 1024, 0 for "until the context is full", clamped, kept with the
    // rest of the sampling settings (and a preset leaves it alone); the last open chat likewise.
    void maxReplyTokensAndLastChatPersist()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("settings.ini"));
        {
            SettingsViewModel settings(path);
            QCOMPARE(settings.maxNewTokens(), 1024);
            QSignalSpy changed(&settings, &SettingsViewModel::samplingChanged);
            settings.setMaxNewTokens(-5);
            QCOMPARE(settings.maxNewTokens(), 0);
            QCOMPARE(settings.sampling().maxNewTokens, 0);
            settings.setMaxNewTokens(1 << 30);
            QCOMPARE(settings.maxNewTokens(), SettingsViewModel::kMaxNewTokensLimit);
            settings.setMaxNewTokens(300);
            QCOMPARE(changed.size(), 3);
            QVERIFY(settings.applyPreset(QStringLiteral("creative")));
            QCOMPARE(settings.maxNewTokens(), 300);
            settings.setLastConversation(42);
        }
        SettingsViewModel again(path);
        QCOMPARE(again.maxNewTokens(), 300);
        QCOMPARE(again.sampling().maxNewTokens, 300);
        QCOMPARE(again.lastConversation(), 42);
    }

    void clampsAndRejects()
    {
        SettingsViewModel settings;
        QSignalSpy language(&settings, &SettingsViewModel::languageChanged);
        settings.setTemperature(9.0);
        QCOMPARE(settings.temperature(), 2.0);
        settings.setTopP(-1.0);
        QCOMPARE(settings.topP(), 0.0);
        settings.setRepetitionPenalty(0.5);
        QCOMPARE(settings.repetitionPenalty(), 1.0);
        settings.setFontSize(100);
        QCOMPARE(settings.fontSize(), 24);
        settings.setLanguage(QStringLiteral("fr"));
        QCOMPARE(settings.language(), QStringLiteral("en"));
        QCOMPARE(language.size(), 0);
        settings.setTheme(QStringLiteral("purple"));
        QCOMPARE(settings.theme(), QStringLiteral("system"));
        QCOMPARE(settings.draftTokens(), 0);
        settings.setDraftTokens(20);
        QCOMPARE(settings.draftTokens(), 8);
        settings.setDraftTokens(-3);
        QCOMPARE(settings.draftTokens(), 0);
    }

    // The draft-token count set on the models page (ModelManager, which every request's sampling
    // takes) is saved, and a restart of the app over the same data directory restores it.
    void appKeepsTheDraftTokenCount()
    {
        QTemporaryDir dir;
        AppOptions options;
        options.dataDir = dir.path();
        {
            const std::unique_ptr<AppContext> app = AppContext::createSimulated(options);
            QCOMPARE(app->models()->draftTokens(), 0);
            QCOMPARE(app->chat()->sampling().draftTokens, 0);
            app->models()->setDraftTokens(5);
            QCOMPARE(app->settings()->draftTokens(), 5);
            QCOMPARE(app->chat()->sampling().draftTokens, 5);
        }
        QCOMPARE(SettingsViewModel(QDir(dir.path()).filePath(QStringLiteral("settings.ini"))).draftTokens(), 5);
        {
            const std::unique_ptr<AppContext> app = AppContext::createSimulated(options);
            QCOMPARE(app->models()->draftTokens(), 5);
            QCOMPARE(app->models()->loadOptions().draftTokens, 5);  // the next load's
            QCOMPARE(app->chat()->sampling().draftTokens, 5);       // the next request's
            app->models()->setDraftTokens(0);
            QCOMPARE(app->settings()->draftTokens(), 0);
            QCOMPARE(app->chat()->sampling().draftTokens, 0);
        }
        QCOMPARE(AppContext::createSimulated(options)->models()->draftTokens(), 0);
    }

    void presets()
    {
        SettingsViewModel settings;
        QSignalSpy sampling(&settings, &SettingsViewModel::samplingChanged);
        settings.setSeed(7);
        QVERIFY(settings.applyPreset(QStringLiteral("precise")));
        QVERIFY(settings.temperature() < 0.5);
        QCOMPARE(settings.seed(), 7);  // a preset keeps the seed
        QVERIFY(settings.applyPreset(QStringLiteral("creative")));
        QVERIFY(settings.temperature() > 1.0);
        QVERIFY(!settings.applyPreset(QStringLiteral("unknown")));
        settings.resetSampling();
        QCOMPARE(settings.temperature(), SamplingSettings{}.temperature);
        QCOMPARE(sampling.size(), 4);
    }
};

QTEST_GUILESS_MAIN(SettingsViewModelTest)
#include "ui_settingsviewmodel_test.moc"
