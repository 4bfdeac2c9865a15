// Speculative decoding in the app: the fixture pair (model ref-s-4.0bpw, draft ref-xs-4.0bpw, one
// vocabulary) on the CPU through EngineGenerationBackend, alone and behind the worker service and
// the chat view model. Greedy replies with 1..4 drafted tokens (draft model or n-gram lookup) equal
// the replies without a draft model; the acceptance counters add up and reach the GUI as reported;
// the draft-token count changes between requests without a reload; a draft of another vocabulary
// is refused at load. Fixtures: $EXL_FIXTURES, default <source>/../shared/fixtures; missing
// fixtures skip the test unless EXL_REQUIRE_FIXTURES=1.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "services/enginegenerationbackend.h"
#include "testmodels.h"
#include "services/workerinferenceservice.h"
#include "storage/chatstore.h"
#include "viewmodels/chatviewmodel.h"

namespace {
constexpr int kWaitMs = 120000;
constexpr int kReplyTokens = 40;

QString fixturesDir()
{
    const QString env = qEnvironmentVariable("EXL_FIXTURES");
    return env.isEmpty() ? QStringLiteral(EXL_DEFAULT_FIXTURES) : env;
}

SamplingSettings greedy(int draftTokens)
{
    SamplingSettings s;
    s.temperature = 0.0;
    s.repetitionPenalty = 1.0;
    s.maxNewTokens = kReplyTokens;
    s.draftTokens = draftTokens;
    return s;
}

const QList<ChatTurn> kChat{{QStringLiteral("user"), QStringLiteral("Tell me a story about a small dog and a big cat.")}};
const QList<ChatTurn> kOtherChat{{QStringLiteral("user"), QStringLiteral("What is the capital of France? Explain.")}};

// What one reply through the backend's steps produced.
struct StepRun {
    std::vector<std::int32_t> ids;
    QString text;
    int tokens = 0;
    int drafted = 0;
    int accepted = 0;
    int passes = 0;
    int draftChars = 0;
    bool cacheConsistent = true;  // after every step the cache held exactly contextIds()
};

StepRun runSteps(EngineGenerationBackend &backend, const QList<ChatTurn> &chat, const SamplingSettings &settings)
{
    StepRun run;
    backend.prefill(chat, settings);
    for (int i = 0; i < 2 * kReplyTokens; ++i) {
        const std::optional<DecodedPiece> piece = backend.decodeStep();
        if (!piece)
            break;
        run.text += piece->text;
        run.tokens += piece->tokens;
        run.drafted += piece->draftedTokens;
        run.accepted += piece->acceptedDraftTokens;
        run.passes += piece->targetPass ? 1 : 0;
        run.draftChars += piece->draftTextLength;
        if (piece->draftTextLength > piece->text.size())
            run.cacheConsistent = false;
        if (backend.cacheLength() != int(backend.contextIds().size()))
            run.cacheConsistent = false;
    }
    run.ids = backend.replyIds();
    return run;
}

}  // namespace

class SpeculativeTest : public QObject
{
    Q_OBJECT

    QString m_target;
    QString m_draft;
    // Plain greedy replies without a draft model, per conversation.
    std::vector<std::int32_t> m_plain;
    std::vector<std::int32_t> m_plainOther;

private Q_SLOTS:
    void initTestCase()
    {
        m_target = QDir(fixturesDir()).filePath(QStringLiteral("models/exl2/ref-s-4.0bpw"));
        m_draft = QDir(fixturesDir()).filePath(QStringLiteral("models/exl2/ref-xs-4.0bpw"));
        for (const QString &dir : {m_target, m_draft}) {
            if (!QFile::exists(QDir(dir).filePath(QStringLiteral("config.json")))) {
                if (qEnvironmentVariable("EXL_REQUIRE_FIXTURES") == QLatin1String("1"))
                    QFAIL(qPrintable(QStringLiteral("fixture model missing: %1 (EXL_REQUIRE_FIXTURES=1)").arg(dir)));
                QSKIP(qPrintable(QStringLiteral("fixture model missing: %1 (set EXL_FIXTURES)").arg(dir)));
            }
        }
        EngineGenerationBackend plain(QStringLiteral("cpu"));
        const LoadResult loaded = plain.load(m_target, LoadOptions{}, [](double) {});
        QVERIFY2(loaded.ok, qPrintable(loaded.errorMessage));
        QVERIFY(!plain.hasDraftModel());
        const StepRun run = runSteps(plain, kChat, greedy(0));
        m_plain = run.ids;
        QCOMPARE(int(m_plain.size()), kReplyTokens);  // the fixture replies at length (no early stop id)
        QCOMPARE(run.drafted, 0);
        QCOMPARE(run.passes, kReplyTokens - 1);  // the first token comes from the prompt's pass
        QVERIFY(run.cacheConsistent);
        m_plainOther = runSteps(plain, kOtherChat, greedy(0)).ids;
        QVERIFY(!m_plainOther.empty());
    }

    void draftModelRepliesEqualPlainGreedy()
    {
        EngineGenerationBackend backend(QStringLiteral("cpu"));
        LoadOptions options;
        options.draftModelPath = m_draft;
        const LoadResult loaded = backend.load(m_target, options, [](double) {});
        QVERIFY2(loaded.ok, qPrintable(loaded.errorMessage));
        QVERIFY(backend.hasDraftModel());
        int acceptedOverall = 0;
        for (int k = 1; k <= 4; ++k) {
            const StepRun run = runSteps(backend, kChat, greedy(k));
            QCOMPARE(backend.draftTokens(), k);
            QVERIFY2(run.ids == m_plain, qPrintable(QStringLiteral("K=%1 differs from plain greedy").arg(k)));
            QCOMPARE(run.tokens, int(run.ids.size()));
            QVERIFY(run.cacheConsistent);
            // The steps' counts are the engine's running counters.
            QCOMPARE(run.drafted, backend.draftedTokens());
            QCOMPARE(run.accepted, backend.acceptedDraftTokens());
            QCOMPARE(run.passes, backend.targetPasses());
            QVERIFY(run.drafted > 0);
            QVERIFY(run.accepted <= run.drafted);
            QVERIFY(run.drafted <= k * run.passes);
            // Each pass yields one token plus its accepted drafts (the first comes from the prompt).
            QCOMPARE(run.tokens - 1, run.passes + run.accepted);
            QCOMPARE(run.draftChars > 0, run.accepted > 0);
            qInfo("K=%d: %d of %d drafts accepted (%.2f), %.2f tokens per pass", k, run.accepted, run.drafted,
                  double(run.accepted) / run.drafted, double(run.tokens - 1) / run.passes);
            acceptedOverall += run.accepted;
        }
        QVERIFY2(acceptedOverall > 0, "the draft model never matched the model");
        // Another conversation on the same load: prefix reuse on both caches, same reply as plain.
        QVERIFY(runSteps(backend, kOtherChat, greedy(3)).ids == m_plainOther);
        // The load-time count applies when a request does not say (-1).
        QVERIFY(runSteps(backend, kChat, greedy(-1)).ids == m_plain);
        QCOMPARE(backend.draftTokens(), 0);
        QCOMPARE(backend.draftedTokens(), 0);
    }

    void ngramWithoutDraftModelEqualsPlainGreedy()
    {
        EngineGenerationBackend backend(QStringLiteral("cpu"));
        LoadOptions options;
        options.draftTokens = 3;  // no draft model: n-gram lookup
        QVERIFY(backend.load(m_target, options, [](double) {}).ok);
        const StepRun run = runSteps(backend, kChat, greedy(-1));
        QCOMPARE(backend.draftTokens(), 3);
        QVERIFY(run.ids == m_plain);
        QVERIFY(run.drafted > 0);
        QVERIFY(run.accepted <= run.drafted);
        QCOMPARE(run.tokens - 1, run.passes + run.accepted);
        QVERIFY(run.cacheConsistent);
    }

    void draftTokensChangeBetweenRequestsWithoutReload()
    {
        WorkerInferenceService service(std::make_unique<EngineGenerationBackend>(QStringLiteral("cpu")));
        QSignalSpy loaded(&service, &InferenceService::loadFinished);
        LoadOptions options;
        options.draftModelPath = m_draft;
        service.loadModel(m_target, options);
        QVERIFY(loaded.wait(kWaitMs));
        QVERIFY2(loaded.first().first().value<LoadResult>().ok,
                 qPrintable(loaded.first().first().value<LoadResult>().errorMessage));

        QTemporaryDir storeDir;
        ChatStore store;
        QVERIFY(store.open(storeDir.filePath(QStringLiteral("chats.sqlite"))));
        ChatViewModel chat(&service, &store);
        QList<TelemetrySample> samples;
        connect(&service, &InferenceService::telemetry, this, [&](const TelemetrySample &s) { samples.append(s); });
        int batchTokens = 0, batchAccepted = 0;
        QString streamed;
        bool rangesInside = true;
        connect(&service, &InferenceService::tokensArrived, this, [&](const TokenBatch &b) {
            batchTokens += b.tokenCount;
            batchAccepted += b.acceptedDraftTokens;
            for (const TextRange &r : b.draftRanges)
                rangesInside = rangesInside && r.start >= 0 && r.length > 0 && r.start + r.length <= b.text.size();
            streamed += b.text;
        });
        QSignalSpy finished(&service, &InferenceService::generationFinished);

        const QString prompt = kChat.constFirst().text;
        for (const int k : {0, 3, 1}) {
            samples.clear();
            batchTokens = batchAccepted = 0;
            streamed.clear();
            finished.clear();
            chat.setSampling(greedy(k));
            chat.openConversation(0);
            QVERIFY(chat.send(prompt));
            QVERIFY(finished.wait(kWaitMs));
            const GenerationStats stats = finished.first().first().value<GenerationStats>();
            QCOMPARE(stats.generatedTokens, kReplyTokens);
            QCOMPARE(batchTokens, stats.generatedTokens);
            QVERIFY(rangesInside);
            QVERIFY(!samples.isEmpty());
            const TelemetrySample last = samples.constLast();
            const QVariantMap shown = chat.data(chat.index(chat.rowCount() - 1), ChatViewModel::StatsRole).toMap();
            if (k == 0) {
                QCOMPARE(stats.draftedTokens, 0);
                QCOMPARE(batchAccepted, 0);
                QVERIFY(last.draftAcceptanceRate < 0);
                QVERIFY(!shown.contains(QStringLiteral("acceptanceRate")));
                QVERIFY(chat.draftRanges(chat.rowCount() - 1).isEmpty());
                continue;
            }
            QVERIFY2(stats.draftedTokens > 0, qPrintable(QStringLiteral("K=%1 drafted nothing").arg(k)));
            QVERIFY(stats.draftedTokens <= k * stats.targetPasses);
            QVERIFY(stats.acceptedDraftTokens <= stats.draftedTokens);
            QCOMPARE(stats.generatedTokens - 1, stats.targetPasses + stats.acceptedDraftTokens);
            QCOMPARE(batchAccepted, stats.acceptedDraftTokens);
            // The rate the GUI shows is accepted / drafted of this reply.
            const double rate = double(stats.acceptedDraftTokens) / stats.draftedTokens;
            QCOMPARE(last.draftAcceptanceRate, rate);
            QCOMPARE(last.tokensPerPass, double(stats.generatedTokens - 1) / stats.targetPasses);
            QCOMPARE(shown.value(QStringLiteral("acceptanceRate")).toDouble(), rate);
            QCOMPARE(shown.value(QStringLiteral("draftedTokens")).toInt(), stats.draftedTokens);
            // Tinting: the accepted drafts' text, marked in the reply; without the marks it is the reply.
            const int row = chat.rowCount() - 1;
            const QList<TextRange> ranges = chat.draftRanges(row);
            QCOMPARE(!ranges.isEmpty(), stats.acceptedDraftTokens > 0);
            if (!ranges.isEmpty()) {
                const QString tinted = chat.tintedText(row, QStringLiteral("#1565c0"));
                QCOMPARE(tinted.count(QStringLiteral("<font color=\"#1565c0\">")), ranges.size());
                QString plain = tinted;
                plain.remove(QRegularExpression(QStringLiteral("</?font[^>]*>")));
                QCOMPARE(plain, chat.messageText(row).toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")));
            }
            QCOMPARE(streamed, chat.messageText(row));
        }
        QCOMPARE(loaded.count(), 1);  // one load for all three counts
    }

    void draftOfAnotherVocabularyIsRefused()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(writeOtherVocabulary(m_draft, dir.path()));
        EngineGenerationBackend backend(QStringLiteral("cpu"));
        LoadOptions options;
        options.draftModelPath = dir.path();
        options.draftTokens = 2;
        const LoadResult result = backend.load(m_target, options, [](double) {});
        QVERIFY(!result.ok);
        qInfo("%s", qPrintable(result.errorMessage));
        QVERIFY2(result.errorMessage.contains(QStringLiteral("cannot be the draft model of ref-s-4.0bpw")),
                 qPrintable(result.errorMessage));
        QVERIFY2(result.errorMessage.contains(QStringLiteral("vocabulary differs")) && result.errorMessage.contains(QStringLiteral("token 300")),
                 qPrintable(result.errorMessage));
        QVERIFY(!backend.loaded());
        QVERIFY(!backend.hasDraftModel());
        // The app stays usable: the same backend loads the model with its proper draft afterwards.
        options.draftModelPath = m_draft;
        QVERIFY(backend.load(m_target, options, [](double) {}).ok);
        QVERIFY(backend.hasDraftModel());
        QVERIFY(runSteps(backend, kChat, greedy(2)).ids == m_plain);
    }
};

QTEST_GUILESS_MAIN(SpeculativeTest)
#include "ui_speculative_test.moc"
