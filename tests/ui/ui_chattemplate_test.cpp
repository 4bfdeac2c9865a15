// Per-model chat template override: kept in the settings file, applied by ModelManager to the
// selected model's load options, and used by the engine backend instead of the model's own
// template (fixture model ref-s-4.0bpw on the CPU; skipped without fixtures unless
// EXL_REQUIRE_FIXTURES=1). The model's own template stays the default; an unreadable override
// falls back to it with a notice.
#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>
#include <algorithm>

#include <exl/model.h>
#include <exl/tokenizer.h>

#include "services/enginegenerationbackend.h"
#include "services/fakeinferenceservice.h"
#include "viewmodels/modelmanager.h"
#include "viewmodels/settingsviewmodel.h"

namespace {
constexpr qint64 kGiB = 1024LL * 1024 * 1024;
const QString kOverride = QStringLiteral(
    "<<{% for m in messages %}{{ m.role }}={{ m.content }};{% endfor %}{% if add_generation_prompt %}A:{% endif %}");

QString fixtureModel()
{
    const QString env = qEnvironmentVariable("EXL_FIXTURES");
    return QDir(env.isEmpty() ? QStringLiteral(EXL_DEFAULT_FIXTURES) : env)
        .filePath(QStringLiteral("models/exl2/ref-s-4.0bpw"));
}
}  // namespace

class ChatTemplateOverrideTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void settingsKeepOverridesPerModel()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("settings.ini"));
        {
            SettingsViewModel settings(file);
            QSignalSpy changed(&settings, &SettingsViewModel::chatTemplatesChanged);
            settings.setChatTemplateOverride(QStringLiteral("/models/a"), kOverride);
            settings.setChatTemplateOverride(QStringLiteral("/models/b"), QStringLiteral("B"));
            settings.setChatTemplateOverride(QStringLiteral("/models/b"), QStringLiteral("B"));  // no change
            QCOMPARE(changed.size(), 2);
        }
        {
            SettingsViewModel settings(file);  // read back from the file
            QCOMPARE(settings.chatTemplateOverride(QStringLiteral("/models/a")), kOverride);
            QCOMPARE(settings.chatTemplateOverride(QStringLiteral("/models/b")), QStringLiteral("B"));
            QVERIFY(settings.chatTemplateOverride(QStringLiteral("/models/c")).isEmpty());
            settings.setChatTemplateOverride(QStringLiteral("/models/b"), QString());  // back to the model's own
            QCOMPARE(settings.chatTemplateOverrides().size(), 1);
        }
        SettingsViewModel settings(file);
        QVERIFY(settings.chatTemplateOverride(QStringLiteral("/models/b")).isEmpty());
        QCOMPARE(settings.chatTemplateOverride(QStringLiteral("/models/a")), kOverride);
    }

    void modelManagerAppliesTheSelectedModelsOverride()
    {
        FakeInferenceService service(QStringLiteral("cuda:0"), FakeTiming{0, 0, 1, 0, 1});
        ModelManager models(&service, std::make_unique<FakeVramPlanner>(24 * kGiB, 936e9));
        QVERIFY(models.rowCount() >= 2);
        SettingsViewModel settings;
        const QString first = models.data(models.index(0), ModelManager::PathRole).toString();
        const QString second = models.data(models.index(1), ModelManager::PathRole).toString();
        settings.setChatTemplateOverride(first, kOverride);
        // The wiring AppContext does: overrides from the settings, edits back into them.
        models.setChatTemplateOverrides(settings.chatTemplateOverrides());
        connect(&models, &ModelManager::chatTemplateOverrideEdited, &settings,
                &SettingsViewModel::setChatTemplateOverride);

        models.setCurrentIndex(0);
        QCOMPARE(models.chatTemplateOverride(), kOverride);
        QCOMPARE(models.loadOptions().chatTemplate, kOverride);
        QSignalSpy changed(&models, &ModelManager::chatTemplateChanged);
        models.setCurrentIndex(1);
        QVERIFY(changed.size() >= 1);
        QVERIFY(models.chatTemplateOverride().isEmpty());
        QVERIFY(models.loadOptions().chatTemplate.isEmpty());  // default: the model's own

        QSignalSpy edited(&models, &ModelManager::chatTemplateOverrideEdited);
        models.setChatTemplateOverride(QStringLiteral("X"));
        QCOMPARE(edited.size(), 1);
        QCOMPARE(edited.at(0).at(0).toString(), second);
        QCOMPARE(settings.chatTemplateOverride(second), QStringLiteral("X"));

        // From a file (the file chooser hands over a file:// URL).
        QTemporaryDir dir;
        QFile file(dir.filePath(QStringLiteral("my.jinja")));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(kOverride.toUtf8());
        file.close();
        QVERIFY(models.loadChatTemplateFile(QUrl::fromLocalFile(file.fileName()).toString()));
        QCOMPARE(models.loadOptions().chatTemplate, kOverride);
        QCOMPARE(settings.chatTemplateOverride(second), kOverride);
        QVERIFY(!models.loadChatTemplateFile(dir.filePath(QStringLiteral("missing.jinja"))));
        QVERIFY(!models.loadError().isEmpty());

        models.setChatTemplateOverride(QString());  // "Use the model's template"
        QVERIFY(settings.chatTemplateOverride(second).isEmpty());
        models.setCurrentIndex(0);
        QCOMPARE(models.loadOptions().chatTemplate, kOverride);  // the first model keeps its own override
    }

    void engineUsesTheOverrideInsteadOfTheModelsTemplate()
    {
        const QString model = fixtureModel();
        if (!QFileInfo(model).isDir()) {
            if (qEnvironmentVariable("EXL_REQUIRE_FIXTURES") == QLatin1String("1"))
                QFAIL(qPrintable(QStringLiteral("fixture model missing: %1").arg(model)));
            QSKIP("fixture model missing");
        }
        // The model's template (ChatML after bos_token), written out by hand.
        const auto tok = exl::Model::open(QFile::encodeName(model).toStdString())->tokenizer();
        const std::string bos = tok->decode(std::vector<std::int32_t>{*tok->bos_id()});
        const std::string ownPrompt = bos + "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n";
        const QList<ChatTurn> conversation{{QStringLiteral("user"), QStringLiteral("hi")}};

        EngineGenerationBackend backend(QStringLiteral("cpu"), 2);
        LoadOptions options;
        options.contextLength = 256;
        const auto noProgress = [](double) {};
        LoadResult r = backend.load(model, options, noProgress);
        QVERIFY2(r.ok, qPrintable(r.errorMessage));
        QCOMPARE(backend.formatPrompt(conversation), ownPrompt);  // default: the model's own

        options.chatTemplate = kOverride;
        r = backend.load(model, options, noProgress);
        QVERIFY2(r.ok, qPrintable(r.errorMessage));
        QVERIFY(r.notice.isEmpty());
        QCOMPARE(backend.formatPrompt(conversation), std::string("<<user=hi;A:"));
        // Tokenized as the rest of the prompt (the backend puts BOS first when the template does not).
        const auto ids = backend.promptIds(conversation), text = tok->encode("<<user=hi;A:", true, false);
        QVERIFY(ids.size() >= text.size() && std::equal(text.rbegin(), text.rend(), ids.rbegin()));

        options.chatTemplate = QStringLiteral("{% if %}broken");
        r = backend.load(model, options, noProgress);
        QVERIFY2(r.ok, qPrintable(r.errorMessage));
        QVERIFY(r.notice.contains(QStringLiteral("line 1")));  // says why, with the position
        QCOMPARE(backend.formatPrompt(conversation), ownPrompt);  // and falls back to the model's own
    }
};

QTEST_GUILESS_MAIN(ChatTemplateOverrideTest)
#include "ui_chattemplate_test.moc"
