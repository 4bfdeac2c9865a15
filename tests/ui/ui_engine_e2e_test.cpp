// The real engine behind the app: the fixture model ref-s-4.0bpw on the CPU backend through
// WorkerInferenceService + EngineGenerationBackend (and ChatViewModel on top), checked against
// the engine's own greedy exl::generate on the same prompt formatted independently with the
// model's chat template. Fixtures: $EXL_FIXTURES, default <source>/../shared/fixtures; missing
// fixtures skip the test unless EXL_REQUIRE_FIXTURES=1.
#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <exl/backend.h>
#include <exl/chat_template.h>
#include <exl/generator.h>
#include <exl/model.h>
#include <exl/tokenizer.h>

#include "services/enginegenerationbackend.h"
#include "services/enginevramplanner.h"
#include "services/modelscanner.h"
#include "services/workerinferenceservice.h"
#include "storage/chatstore.h"
#include "viewmodels/chatviewmodel.h"
#include "viewmodels/modelmanager.h"
#include <qcoro/qcorotask.h>

namespace {
constexpr int kWaitMs = 60000;

QString fixturesDir()
{
    const QString env = qEnvironmentVariable("EXL_FIXTURES");
    return env.isEmpty() ? QStringLiteral(EXL_DEFAULT_FIXTURES) : env;
}

SamplingSettings greedy(int maxNewTokens)
{
    SamplingSettings s;
    s.temperature = 0.0;
    s.repetitionPenalty = 1.0;
    s.maxNewTokens = maxNewTokens;
    return s;
}

struct Reply {
    QString text;
    GenerationStats stats;
};

// The engine's own answer: the model's template rendered here, tokenized, exl::generate greedy.
struct Reference {
    std::vector<std::int32_t> promptIds;
    std::vector<std::int32_t> ids;
    QString text;
};
}  // namespace

class EngineEndToEndTest : public QObject
{
    Q_OBJECT

    QString m_modelDir;
    std::shared_ptr<const exl::Model> m_model;
    std::unique_ptr<exl::Backend> m_reference;
    std::unique_ptr<WorkerInferenceService> m_service;

    Reference reference(const QList<ChatTurn> &conversation, int maxNewTokens, const std::vector<std::int32_t> &stopIds)
    {
        const auto tok = m_model->tokenizer();
        nlohmann::ordered_json messages = nlohmann::ordered_json::array();
        for (const ChatTurn &t : conversation)
            messages.push_back({{"role", t.role.toStdString()}, {"content", t.text.toStdString()}});
        const exl::ChatTemplate tpl(tok->chat_template());
        const std::string prompt = tpl.render_chat(messages, true, tok->decode(std::vector<std::int32_t>{*tok->bos_id()}),
                                                   tok->decode(std::vector<std::int32_t>{tok->eos_ids().front()}));
        Reference r;
        r.promptIds = tok->encode(prompt, true, false);
        exl::GenerateOptions options;
        options.max_new_tokens = maxNewTokens;
        options.sampler.greedy = true;
        options.stop_ids = stopIds;
        const exl::GenerateResult g = exl::generate(*m_reference, tok.get(), r.promptIds, options);
        r.ids = g.ids;
        r.text = QString::fromStdString(tok->decode(g.ids, true));
        return r;
    }

    // Generates through the service and collects the streamed text of that request.
    Reply run(const QList<ChatTurn> &conversation, const SamplingSettings &settings)
    {
        Reply reply;
        QSignalSpy finished(m_service.get(), &InferenceService::generationFinished);
        QSignalSpy errors(m_service.get(), &InferenceService::error);
        const quint64 id = m_service->generate(conversation, settings);
        auto conn = connect(m_service.get(), &InferenceService::tokensArrived, this, [&](const TokenBatch &b) {
            if (b.requestId == id)
                reply.text += b.text;
        });
        while (finished.isEmpty() && errors.isEmpty())
            if (!finished.wait(kWaitMs))
                break;
        disconnect(conn);
        if (!errors.isEmpty())
            qWarning() << "generation error:" << errors.first().at(1).toString();
        if (!finished.isEmpty())
            reply.stats = finished.first().first().value<GenerationStats>();
        return reply;
    }

    bool loadFixture(LoadResult *out = nullptr)
    {
        QSignalSpy loaded(m_service.get(), &InferenceService::loadFinished);
        m_service->loadModel(m_modelDir, LoadOptions{});
        if (!loaded.wait(kWaitMs))
            return false;
        const LoadResult result = loaded.first().first().value<LoadResult>();
        if (out)
            *out = result;
        return result.ok;
    }

    std::vector<std::int32_t> stopIdsOfBackend()
    {
        EngineGenerationBackend probe(QStringLiteral("cpu"));
        probe.load(m_modelDir, LoadOptions{}, [](double) {});
        return probe.stopIds();
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_modelDir = QDir(fixturesDir()).filePath(QStringLiteral("models/exl2/ref-s-4.0bpw"));
        if (!QFile::exists(QDir(m_modelDir).filePath(QStringLiteral("config.json")))) {
            if (qEnvironmentVariable("EXL_REQUIRE_FIXTURES") == QLatin1String("1"))
                QFAIL(qPrintable(QStringLiteral("fixture model missing: %1 (EXL_REQUIRE_FIXTURES=1)").arg(m_modelDir)));
            QSKIP(qPrintable(QStringLiteral("fixture model missing: %1 (set EXL_FIXTURES)").arg(m_modelDir)));
        }
        m_model = exl::Model::open(m_modelDir.toStdString());
        m_reference = exl::make_cpu_backend({});
        m_reference->load(m_model);
        m_reference->allocate_cache({4096, exl::CacheType::fp16});
        m_service = std::make_unique<WorkerInferenceService>(std::make_unique<EngineGenerationBackend>(QStringLiteral("cpu")));
        QCOMPARE(m_service->deviceName(), QStringLiteral("cpu"));
        QVERIFY(!m_service->deviceNote().isEmpty());
        LoadResult result;
        QVERIFY(loadFixture(&result));
        QCOMPARE(result.info.architecture, QStringLiteral("llama"));
        QVERIFY(result.notice.isEmpty());  // the fixture ships a chat template
    }

    void cleanupTestCase() { m_service.reset(); }

    void backendStepsMatchEngineGenerate()
    {
        EngineGenerationBackend backend(QStringLiteral("cpu"));
        QVERIFY(backend.load(m_modelDir, LoadOptions{}, [](double) {}).ok);
        const QList<ChatTurn> chat{{QStringLiteral("user"), QStringLiteral("Tell me a story about a small dog.")}};
        const Reference ref = reference(chat, 40, backend.stopIds());
        QCOMPARE(backend.promptIds(chat), ref.promptIds);
        const PrefillResult p = backend.prefill(chat, greedy(40));
        QCOMPARE(p.promptTokens, int(ref.promptIds.size()));
        QString text;
        for (int i = 0; i < 40; ++i) {
            const std::optional<DecodedPiece> piece = backend.decodeStep();
            if (!piece)
                break;
            text += piece->text;
        }
        QVERIFY2(!ref.ids.empty(), "the fixture model replied with nothing");
        QCOMPARE(backend.replyIds(), ref.ids);
        QCOMPARE(text, ref.text);
    }

    void boundLineFollowsTheContext()
    {
        // The telemetry's bound: measured memory bandwidth over the planner's bytes per token,
        // which grow with the cached context.
        EngineGenerationBackend backend(QStringLiteral("cpu"));
        QCOMPARE(backend.boundTokensPerSecond(), 0.0);  // nothing loaded
        QVERIFY(backend.load(m_modelDir, LoadOptions{}, [](double) {}).ok);
        const double empty = backend.boundTokensPerSecond();
        QVERIFY(empty > 0);
        const QList<ChatTurn> chat{{QStringLiteral("user"), QStringLiteral("Tell me a story about a small dog.")}};
        backend.prefill(chat, greedy(8));
        const double later = backend.boundTokensPerSecond();
        QVERIFY2(later < empty, qPrintable(QStringLiteral("%1 then %2").arg(empty).arg(later)));
        backend.unload();
        QCOMPARE(backend.boundTokensPerSecond(), 0.0);
    }

    // The Models page's bound (the planner's, at an empty context) and the Telemetry page's bound
    // right after loading are one number: the same bytes per token over the same measured bandwidth.
    void modelsPageAndTelemetryBoundsAgree()
    {
        const std::optional<ModelInfo> info = describeModelFolder(m_modelDir);
        QVERIFY(info);
        for (const CacheKind cache : {CacheKind::Fp16, CacheKind::Q4}) {
            LoadOptions options;
            options.contextLength = 512;
            options.cacheKind = cache;
            EngineGenerationBackend backend(QStringLiteral("cpu"));
            QVERIFY(backend.load(m_modelDir, options, [](double) {}).ok);
            const std::unique_ptr<EngineVramPlanner> planner = EngineVramPlanner::forDevice(QStringLiteral("cpu"));
            const VramPlan plan = planner->plan({*info, 0.0, 512, cache, 0});
            QVERIFY(plan.available);
            const double telemetry = backend.boundTokensPerSecond();
            QVERIFY(telemetry > 0);
            QVERIFY2(std::abs(plan.boundEmptyTokensPerSecond - telemetry) <= 1e-6 * telemetry,
                     qPrintable(QStringLiteral("models page %1, telemetry %2").arg(plan.boundEmptyTokensPerSecond).arg(telemetry)));
            // At the full context the bound is lower (the cache is read too).
            QVERIFY(plan.boundTokensPerSecond < plan.boundEmptyTokensPerSecond);
        }
    }

    void streamedReplyMatchesEngineGenerate()
    {
        const QList<ChatTurn> chat{{QStringLiteral("system"), QStringLiteral("You are a helpful assistant.")},
                                   {QStringLiteral("user"), QStringLiteral("Hello! What is the capital of France?")}};
        const Reference ref = reference(chat, 32, stopIdsOfBackend());
        const Reply reply = run(chat, greedy(32));
        QCOMPARE(reply.stats.promptTokens, int(ref.promptIds.size()));
        QCOMPARE(reply.stats.generatedTokens, int(ref.ids.size()));
        QVERIFY(!reply.text.isEmpty());
        QCOMPARE(reply.text, ref.text);
        QVERIFY(reply.stats.decodeTokensPerSecond > 0 || reply.stats.generatedTokens <= 1);
        QVERIFY(reply.stats.timeToFirstTokenMs > 0);
    }

    void secondTurnReusesTheCache()
    {
        QList<ChatTurn> chat{{QStringLiteral("user"), QStringLiteral("Write one sentence about the sea.")}};
        const Reply first = run(chat, greedy(24));
        QVERIFY(first.stats.generatedTokens > 0);
        chat.append({QStringLiteral("assistant"), first.text});
        chat.append({QStringLiteral("user"), QStringLiteral("And one about the mountains.")});
        const Reply second = run(chat, greedy(24));
        QVERIFY2(second.stats.reusedPromptTokens > 0, "the second turn prefilled everything again");
        QVERIFY(second.stats.promptTokens - second.stats.reusedPromptTokens < second.stats.promptTokens);
        // Reusing the cache changes nothing in the reply.
        const Reference ref = reference(chat, 24, stopIdsOfBackend());
        QCOMPARE(second.stats.promptTokens, int(ref.promptIds.size()));
        QCOMPARE(second.text, ref.text);
    }

    void cancelMidStreamLeavesAConsistentConversation()
    {
        QTemporaryDir dir;
        ChatStore store;
        QVERIFY(store.open(dir.filePath(QStringLiteral("chats.sqlite"))));
        ChatViewModel chat(m_service.get(), &store);
        SamplingSettings sampling;  // sampled, long: the reply is still running when stopped
        sampling.temperature = 1.0;
        sampling.seed = 7;
        sampling.maxNewTokens = 1500;
        chat.setSampling(sampling);
        QSignalSpy tokens(m_service.get(), &InferenceService::tokensArrived);
        QVERIFY(chat.send(QStringLiteral("Tell me a very long story.")));
        QVERIFY(tokens.wait(kWaitMs));
        chat.stop();
        QVERIFY(!chat.busy());
        QCOMPARE(chat.rowCount(), 2);
        const QString partial = chat.data(chat.index(1), ChatViewModel::TextRole).toString();
        QVERIFY(chat.data(chat.index(1), ChatViewModel::StoppedRole).toBool());
        QCOMPARE(store.messages(chat.conversationId()).at(1).text, partial);

        // The next turn starts from the stopped reply; its greedy answer equals the engine's own
        // on the same conversation, so the cache was left consistent.
        chat.setSampling(greedy(16));
        QSignalSpy done(&chat, &ChatViewModel::replyFinished);
        QVERIFY(chat.send(QStringLiteral("Thanks. Now a short one.")));
        QVERIFY(done.wait(kWaitMs));
        QCOMPARE(chat.rowCount(), 4);
        const QList<ChatTurn> conversation{{QStringLiteral("user"), QStringLiteral("Tell me a very long story.")},
                                           {QStringLiteral("assistant"), partial},
                                           {QStringLiteral("user"), QStringLiteral("Thanks. Now a short one.")}};
        const Reference ref = reference(conversation, 16, stopIdsOfBackend());
        QCOMPARE(chat.data(chat.index(3), ChatViewModel::TextRole).toString(), ref.text);
        const QVariantMap stats = chat.data(chat.index(3), ChatViewModel::StatsRole).toMap();
        QCOMPARE(stats.value(QStringLiteral("promptTokens")).toInt(), int(ref.promptIds.size()));
        QVERIFY(stats.value(QStringLiteral("reusedPromptTokens")).toInt() > 0);
    }

    void brokenFolderReportsAnErrorAndTheAppKeepsWorking()
    {
        QTemporaryDir dir;
        QFile config(dir.filePath(QStringLiteral("config.json")));
        QVERIFY(config.open(QIODevice::WriteOnly));
        config.write("{ \"model_type\": \"llama\", \"hidden_size\": ");
        config.close();
        // Listed (so the user sees it) but marked unreadable.
        const std::optional<ModelInfo> listed = describeModelFolder(dir.path());
        QVERIFY(listed);
        QCOMPARE(listed->architecture, QStringLiteral("?"));

        QSignalSpy loaded(m_service.get(), &InferenceService::loadFinished);
        m_service->loadModel(dir.path(), LoadOptions{});
        QVERIFY(loaded.wait(kWaitMs));
        const LoadResult failed = loaded.first().first().value<LoadResult>();
        QVERIFY(!failed.ok);
        QVERIFY2(failed.errorMessage.contains(QStringLiteral("config.json")), qPrintable(failed.errorMessage));

        // No model now: generating reports an error instead of crashing.
        QSignalSpy errors(m_service.get(), &InferenceService::error);
        m_service->generate({{QStringLiteral("user"), QStringLiteral("Hi")}}, greedy(4));
        QVERIFY(errors.wait(kWaitMs));

        // Loading the fixture again works and chats.
        QVERIFY(loadFixture());
        const Reply reply = run({{QStringLiteral("user"), QStringLiteral("Hi")}}, greedy(8));
        QVERIFY(reply.stats.promptTokens > 0);
        QCOMPARE(reply.stats.reusedPromptTokens, 0);
    }

    void modelManagerListsModelFolders()
    {
        ModelManager models(m_service.get(), std::make_unique<UnavailableVramPlanner>());
        QCOMPARE(models.rowCount(), 0);
        const QString root = QDir(fixturesDir()).filePath(QStringLiteral("models/exl2"));
        QSignalSpy reset(&models, &QAbstractItemModel::modelReset);
        models.setModelFolders({root});
        QVERIFY(models.scanning());   // scanned off the GUI thread: nothing yet
        QCOMPARE(reset.size(), 0);
        QCoro::waitFor(models.scanned());
        QCOMPARE(reset.size(), 1);
        const int row = models.indexOfPath(m_modelDir);
        QVERIFY(row >= 0);
        const QModelIndex index = models.index(row);
        QCOMPARE(index.data(ModelManager::NameRole).toString(), QStringLiteral("ref-s-4.0bpw"));
        QCOMPARE(index.data(ModelManager::ArchitectureRole).toString(), QStringLiteral("llama"));
        QCOMPARE(index.data(ModelManager::NativeContextRole).toInt(), 2048);
        QVERIFY(qAbs(index.data(ModelManager::BpwRole).toDouble() - 4.0) < 0.5);
        QVERIFY(index.data(ModelManager::SizeRole).toDouble() > 1e6);
        QVERIFY(index.data(ModelManager::ParametersRole).toDouble() > 1e6);
        QCOMPARE(models.fit().value(QStringLiteral("available")).toBool(), false);  // no planner yet

        // Adding a folder: a model folder is accepted and listed, an empty one refused.
        QTemporaryDir empty;
        QSignalSpy rejected(&models, &ModelManager::folderRejected);
        QVERIFY(!QCoro::waitFor(models.addModelFolder(empty.path())));
        QCOMPARE(rejected.size(), 1);
        ModelManager other(m_service.get(), std::make_unique<UnavailableVramPlanner>());
        QSignalSpy added(&other, &ModelManager::folderAdded);
        QVERIFY(QCoro::waitFor(other.addModelFolder(QUrl::fromLocalFile(m_modelDir).toString())));
        QCOMPARE(added.size(), 1);
        QCOMPARE(other.rowCount(), 1);
        QCOMPARE(other.currentIndex(), 0);

        // Loading through the view model reports the model as loaded.
        QSignalSpy loadedChanged(&other, &ModelManager::loadedModelChanged);
        other.load();
        QVERIFY(loadedChanged.wait(kWaitMs));
        QCOMPARE(other.loadedModelName(), QStringLiteral("ref-s-4.0bpw"));
        QVERIFY(other.loadError().isEmpty());
    }

    void missingChatTemplateFallsBackToChatMl()
    {
        QTemporaryDir dir;
        for (const char *name : {"config.json", "generation_config.json", "output.safetensors", "tokenizer.json"})
            QVERIFY(QFile::link(QDir(m_modelDir).filePath(QString::fromLatin1(name)), dir.filePath(QString::fromLatin1(name))));
        QFile config(dir.filePath(QStringLiteral("tokenizer_config.json")));
        QVERIFY(config.open(QIODevice::WriteOnly));
        config.write(R"({"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>"})");
        config.close();
        EngineGenerationBackend backend(QStringLiteral("cpu"));
        const LoadResult result = backend.load(dir.path(), LoadOptions{}, [](double) {});
        QVERIFY2(result.ok, qPrintable(result.errorMessage));
        QVERIFY(result.notice.contains(QStringLiteral("ChatML")));
        const QList<ChatTurn> chat{{QStringLiteral("user"), QStringLiteral("Hi")}};
        QCOMPARE(QString::fromStdString(backend.formatPrompt(chat)),
                 QStringLiteral("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"));
        QVERIFY(backend.prefill(chat, greedy(4)).promptTokens > 0);
    }
};

QTEST_GUILESS_MAIN(EngineEndToEndTest)
#include "ui_engine_e2e_test.moc"
