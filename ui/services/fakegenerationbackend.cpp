#include "fakegenerationbackend.h"

#include <QRegularExpression>
#include <QThread>

namespace {
constexpr qint64 kGiB = 1024LL * 1024 * 1024;
constexpr qint64 kFakeVram = 24 * kGiB;           // a 24 GB card
constexpr double kFakeWatts = 300.0;
constexpr double kFakeBandwidth = 936e9;          // bytes/s, roughly an RTX 3090

// The canned reply: Markdown with a code block, so the chat view shows both.
const char *kScript =
    "Here is a short answer, streamed by the simulated engine. "
    "EXL2 stores each layer with its own bit width, so a 7B model fits in about 4 GB at 4.0 bpw.\n\n"
    "```python\n"
    "def tokens_per_second(bandwidth, model_bytes):\n"
    "    return bandwidth / model_bytes\n"
    "```\n\n"
    "Decode speed is bound by memory bandwidth: every token reads all the weights once.";

// Word-sized pieces with their leading whitespace, like BPE tokens.
QStringList splitIntoTokens(const QString &text)
{
    static const QRegularExpression tokenRe(QStringLiteral("\\s*\\S+"));
    QStringList pieces;
    for (auto match = tokenRe.globalMatch(text); match.hasNext();)
        pieces.append(match.next().captured());
    return pieces;
}
}  // namespace

FakeGenerationBackend::FakeGenerationBackend(QString deviceName, FakeTiming timing)
    : m_deviceName(std::move(deviceName))
    , m_timing(timing)
{
    m_energyClock.start();
}

QList<ModelInfo> FakeGenerationBackend::availableModels() const
{
    const QString root = QStringLiteral("/models/fake/");
    QList<ModelInfo> models{
        {root + "Llama-3.1-8B-Instruct-exl2-4.0bpw", "Llama 3.1 8B Instruct", "llama", 8030000000LL, 4.0, 6.0,
         4600000000LL, 131072},
        {root + "Mistral-7B-Instruct-v0.3-exl2-6.0bpw", "Mistral 7B Instruct v0.3", "mistral", 7250000000LL, 6.0,
         8.0, 5700000000LL, 32768},
        {root + "Qwen2.5-1.5B-Instruct-exl2-8.0bpw", "Qwen2.5 1.5B Instruct", "qwen2", 1540000000LL, 8.0, 8.0,
         1900000000LL, 32768},
        {tooLargeModelPath(), "Llama 3 70B", "llama", 70600000000LL, 8.0, 8.0, 72000000000LL, 8192},
    };
    // The two Llama 3 models share a (simulated) vocabulary: either can draft for the other.
    models[0].vocabulary = models[3].vocabulary = QByteArrayLiteral("simulated llama-3 vocabulary");
    return models;
}

LoadResult FakeGenerationBackend::load(const QString &path, const LoadOptions &options,
                                       const std::function<void(double)> &progress)
{
    m_loaded.reset();
    const QList<ModelInfo> models = availableModels();
    const auto it = std::find_if(models.begin(), models.end(), [&](const ModelInfo &m) { return m.path == path; });
    if (it == models.end())
        return {false, {}, QObject::tr("No model found in %1.").arg(path), {}};
    for (int i = 1; i <= m_timing.loadSteps; ++i) {
        sleepSeconds(m_timing.loadStepMs / 1000.0);
        progress(double(i) / m_timing.loadSteps);
        if (path == tooLargeModelPath() && i == m_timing.loadSteps / 2)
            return {false, {}, QObject::tr("Out of memory on %1 while loading layer 41 of 80.").arg(m_deviceName), {}};
    }
    m_loaded = *it;
    m_options = options;
    return {true, *it, {}, {}};
}

void FakeGenerationBackend::unload()
{
    m_loaded.reset();
}

PrefillResult FakeGenerationBackend::prefill(const QList<ChatTurn> &conversation, const SamplingSettings &)
{
    int chars = 0;
    for (const ChatTurn &turn : conversation)
        chars += turn.text.size() + 8;  // template markers
    const int promptTokens = std::max(1, chars / 4);
    if (m_timing.decodeTokensPerSecond > 0)
        sleepSeconds(promptTokens / m_timing.prefillTokensPerSecond);

    QString reply;
    for (int i = 0; i < std::max(1, m_timing.replyRepeats); ++i)
        reply += QString::fromUtf8(kScript) + (i + 1 < m_timing.replyRepeats ? QStringLiteral("\n\n") : QString());
    m_pieces = splitIntoTokens(reply);
    m_next = 0;
    m_decodeClock.start();
    return {promptTokens, 0};
}

std::optional<DecodedPiece> FakeGenerationBackend::decodeStep()
{
    if (m_next >= m_pieces.size())
        return std::nullopt;
    // Token n is due n / rate seconds after the prefill: a schedule, not a fixed sleep per token,
    // so the sleeps' overshoot does not add up at high rates (thousands of tokens a second).
    if (m_timing.decodeTokensPerSecond > 0)
        sleepSeconds((m_next + 1) / m_timing.decodeTokensPerSecond - m_decodeClock.nsecsElapsed() / 1e9);
    return DecodedPiece{m_pieces.at(m_next++)};
}

int FakeGenerationBackend::scriptTokenCount()
{
    return int(splitIntoTokens(QString::fromUtf8(kScript)).size());
}

GenerationBackend::VramUsage FakeGenerationBackend::vram() const
{
    VramUsage v;
    if (m_deviceName == QLatin1String("cpu"))
        return v;
    v.total = kFakeVram;
    if (!m_loaded)
        return v;
    // Weights plus a cache of 128 KiB per token of context (an 8B model at FP16), half a GiB else.
    v.weights = m_loaded->sizeBytes;
    v.cache = qint64(m_options.contextLength) * 128 * 1024;
    v.used = v.weights + v.cache + kGiB / 2;
    return v;
}

double FakeGenerationBackend::powerWatts() const
{
    return m_deviceName == QLatin1String("cpu") || !m_loaded ? -1.0 : kFakeWatts;
}

GpuStatus FakeGenerationBackend::gpuStatus() const
{
    GpuStatus g;
    if (m_deviceName == QLatin1String("cpu"))
        return g;
    // A busy, unthrottled card alone on its GPU, and a second card holding a display's memory.
    g.index = 0;
    g.name = QStringLiteral("Simulated GPU");
    g.utilizationPercent = m_loaded ? 96 : 0;
    g.smClockMhz = g.smClockMaxMhz = 1980;
    g.clockReasonsKnown = true;
    g.otherProcesses = 0;
    g.otherGpus.append(GpuMemorySample{1, QStringLiteral("Simulated GPU"), kGiB + kGiB / 4, kFakeVram});
    return g;
}

double FakeGenerationBackend::energyJoules() const
{
    // A made-up board drawing kFakeWatts since the backend was made.
    return m_deviceName == QLatin1String("cpu") ? -1.0 : kFakeWatts * m_energyClock.nsecsElapsed() / 1e9;
}

double FakeGenerationBackend::boundTokensPerSecond() const
{
    if (!m_loaded || m_loaded->sizeBytes <= 0)
        return 0.0;
    const double bandwidth = m_deviceName == QLatin1String("cpu") ? 60e9 : kFakeBandwidth;
    return bandwidth / double(m_loaded->sizeBytes);
}

void FakeGenerationBackend::sleepSeconds(double seconds)
{
    if (seconds > 0)
        QThread::usleep(static_cast<unsigned long>(seconds * 1e6));
}
