#include "enginegenerationbackend.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#include <exl/backend.h>
#include <exl/chat_prompt.h>
#include <exl/cuda.h>
#include <exl/error.h>
#include <exl/generator.h>
#include <exl/gpu_power.h>
#include <exl/model.h>
#include <exl/plan.h>
#include <exl/tokenizer.h>

#include "enginevramplanner.h"
#include "modelscanner.h"

namespace {
// The CUDA device index of a backend named "cuda:N" (or "cuda"), -1 for any other backend.
int cudaIndex(const exl::Backend &backend)
{
    const std::string name = backend.name();
    if (name.rfind("cuda", 0) != 0)
        return -1;
    return name.size() > 5 ? std::atoi(name.c_str() + 5) : 0;
}

constexpr std::size_t kPenaltyWindow = 256;  // recent ids the repetition penalty looks at

exl::CacheType cacheType(CacheKind kind)
{
    switch (kind) {
    case CacheKind::Fp16: return exl::CacheType::fp16;
    case CacheKind::Fp8: return exl::CacheType::fp8;
    case CacheKind::Q8: return exl::CacheType::q8;
    case CacheKind::Q6: return exl::CacheType::q6;
    case CacheKind::Q4: return exl::CacheType::q4;
    }
    return exl::CacheType::fp16;
}

nlohmann::ordered_json toMessages(const QList<ChatTurn> &conversation)
{
    nlohmann::ordered_json messages = nlohmann::ordered_json::array();
    for (const ChatTurn &turn : conversation)
        messages.push_back({{"role", turn.role.toStdString()}, {"content", turn.text.toStdString()}});
    return messages;
}
}  // namespace

EngineGenerationBackend::EngineGenerationBackend(const QString &device, int threads)
    : m_device(device.isEmpty() ? std::string("auto") : device.toStdString())
    , m_threads(threads)
{
    makeBackend();
    m_deviceName = QString::fromStdString(m_backend->name());
}

EngineGenerationBackend::~EngineGenerationBackend() = default;

void EngineGenerationBackend::makeBackend()
{
    m_backend.reset();  // free the old weights and cache first
    exl::BackendOptions options;
    options.max_chunk_size = m_maxChunk;
    options.threads = m_threads;
    std::string note;
    try {
        m_backend = exl::make_backend(m_device, options, &note);
        if (m_device == "cpu")
            m_deviceNote = tr("the CPU was asked for");
        else if (const auto open = note.find("(no usable GPU: "); open != std::string::npos)
            m_deviceNote = QString::fromStdString(note.substr(open + 16, note.size() - open - 17));
        else
            m_deviceNote.clear();
    } catch (const std::exception &e) {
        // "cuda:N" was asked for and cannot be used: run on the CPU and say why.
        m_backend = exl::make_cpu_backend(options);
        m_deviceNote = QString::fromUtf8(e.what());
    }
    m_backendDirty = false;
    m_power.reset();
    if (const int index = cudaIndex(*m_backend); index >= 0) {
        auto power = std::make_unique<exl::GpuPowerMonitor>(index);
        if (power->available())
            m_power = std::move(power);
    }
}

double EngineGenerationBackend::powerWatts() const
{
    return m_power ? m_power->read().watts : -1.0;
}

GpuStatus EngineGenerationBackend::gpuStatus() const
{
    GpuStatus g;
    if (!m_power)
        return g;
    const exl::GpuStateReading st = m_power->state();
    g.utilizationPercent = st.utilization_percent;
    g.smClockMhz = st.sm_clock_mhz;
    g.smClockMaxMhz = st.sm_clock_max_mhz;
    g.clockReasonsKnown = st.clock_reasons_known;
    g.clockReasons = st.clock_reasons;
    g.otherProcesses = st.other_processes;
    g.index = m_backend ? cudaIndex(*m_backend) : -1;
    for (const exl::GpuMemoryInfo &d : m_power->devices()) {
        if (d.index == g.index) {
            g.name = QString::fromStdString(d.name);
            continue;
        }
        g.otherGpus.append(GpuMemorySample{d.index, QString::fromStdString(d.name), qint64(d.used_bytes), qint64(d.total_bytes)});
    }
    return g;
}

double EngineGenerationBackend::energyJoules() const
{
    return m_power ? m_power->read().energy_joules : -1.0;
}

void EngineGenerationBackend::resetState()
{
    m_model.reset();
    m_tokenizer.reset();
    m_prompt.reset();
    m_stopIds.clear();
    m_boundBandwidth = 0.0;
    m_contextIds.clear();
    m_replyIds.clear();
    m_logits.clear();
    m_pending.reset();
    m_sampler.reset();
    m_stream.reset();
    m_finished = true;
}

LoadResult EngineGenerationBackend::load(const QString &path, const LoadOptions &options,
                                         const std::function<void(double)> &progress)
{
    unload();
    const QString folder = QFileInfo(path).fileName();
    LoadResult result;
    try {
        progress(0.0);
        if (!QFileInfo(path).isDir())
            return {false, {}, tr("%1 is not a folder.").arg(path), {}};
        auto model = exl::Model::open(QFile::encodeName(path).toStdString());
        if (!model->tokenizer())
            return {false, {}, tr("%1 has no tokenizer.json, so it cannot chat.").arg(folder), {}};
        progress(0.1);
        const int chunk = std::clamp(options.maxChunkSize, 16, 8192);
        if (m_backendDirty || chunk != m_maxChunk) {
            m_maxChunk = chunk;
            makeBackend();
        }
        m_backendDirty = true;
        m_backend->load(model);
        progress(0.9);
        m_backend->allocate_cache({std::max(16, options.contextLength), cacheType(options.cacheKind)});
        progress(1.0);

        m_model = model;
        m_tokenizer = model->tokenizer();
        // The chat template: the user's for this model, else the model's own, else built-in ChatML.
        const exl::ChatPromptOptions promptOptions{.chatml_fallback = true, .ensure_bos = true};
        if (!options.chatTemplate.isEmpty()) {
            try {
                m_prompt = std::make_unique<exl::ChatPrompt>(m_tokenizer, options.chatTemplate.toStdString(), promptOptions);
            } catch (const std::exception &e) {
                result.notice = tr("Your chat template for this model cannot be read (%1); using the model's own instead.")
                                    .arg(QString::fromUtf8(e.what()));
            }
        }
        if (!m_prompt) {
            try {
                m_prompt = std::make_unique<exl::ChatPrompt>(m_tokenizer, std::string(), promptOptions);
                if (m_prompt->uses_fallback() && result.notice.isEmpty())
                    result.notice = tr("The model has no chat template; using ChatML.");
            } catch (const std::exception &e) {
                result.notice = tr("The model's chat template cannot be read (%1); using ChatML instead.")
                                    .arg(QString::fromUtf8(e.what()));
                m_prompt = std::make_unique<exl::ChatPrompt>(m_tokenizer, exl::ChatPrompt::chatml(), promptOptions);
            }
        }
        m_stopIds = m_tokenizer->eos_ids();
        for (std::int32_t id : m_prompt->end_of_turn_ids())
            if (std::find(m_stopIds.begin(), m_stopIds.end(), id) == m_stopIds.end())
                m_stopIds.push_back(id);
        computeBound(path, options);
        result.ok = true;
        result.info = describeModel(*model, QFileInfo(path).absoluteFilePath());
        return result;
    } catch (const exl::Error &e) {
        const QString what = QString::fromUtf8(e.what());
        result.errorMessage = e.kind() == exl::ErrorKind::out_of_memory
            ? tr("Out of memory while loading %1: %2. Try a shorter context, a smaller cache type or a smaller model.")
                  .arg(folder, what)
            : tr("Could not load %1: %2").arg(folder, what);
    } catch (const std::bad_alloc &) {
        result.errorMessage = tr("Out of memory while loading %1. Try a shorter context, a smaller cache type or a "
                                 "smaller model.").arg(folder);
    } catch (const std::exception &e) {
        result.errorMessage = tr("Could not load %1: %2").arg(folder, QString::fromUtf8(e.what()));
    }
    unload();  // give back whatever the failed load allocated
    return result;
}

namespace {
// System memory's copy bandwidth (read + write bytes per second), measured once.
double systemCopyBandwidth()
{
    static const double measured = [] {
        const std::size_t bytes = std::size_t(64) << 20;  // well past the caches, short to copy
        std::vector<char> a(bytes, 1), b(bytes, 0);
        double best = 0.0;
        for (int i = 0; i < 3; ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            std::memcpy(b.data(), a.data(), bytes);
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (s > 0)
                best = std::max(best, 2.0 * double(bytes) / s);
            a[i] = b[bytes - 1 - std::size_t(i)];  // keep the copies observable
        }
        return best;
    }();
    return measured;
}
}  // namespace

void EngineGenerationBackend::computeBound(const QString &path, const LoadOptions &options)
{
    m_boundBandwidth = m_boundWeightBytes = m_boundCacheBytes = 0.0;
    try {
        namespace plan = exl::plan;
        const plan::ModelShape shape = plan::shape_from_folder(QFile::encodeName(path).toStdString(), plan::Layout::engine);
        plan::PlanOptions o;
        o.context = std::max(16, options.contextLength);
        o.cache = planCacheSpec(options.cacheKind);
        const double at0 = double(plan::decode_bytes_per_token(shape, o, 0));
        const double at1k = double(plan::decode_bytes_per_token(shape, o, 1024));
        m_boundWeightBytes = at0;
        m_boundCacheBytes = (at1k - at0) / 1024.0;
        if (const int index = cudaIndex(*m_backend); index >= 0) {
            const auto devices = exl::cuda_devices();
            if (index >= 0 && index < int(devices.size()))
                m_boundBandwidth = devices[std::size_t(index)].peak_bandwidth_gbs * 1e9;
        } else {
            m_boundBandwidth = systemCopyBandwidth();
        }
    } catch (const std::exception &) {
        m_boundBandwidth = 0.0;  // no bound line for this model
    }
}

double EngineGenerationBackend::boundTokensPerSecond() const
{
    if (!m_model || m_boundBandwidth <= 0 || m_boundWeightBytes <= 0)
        return 0.0;
    const double length = m_backend ? double(m_backend->cache_length()) : 0.0;
    return m_boundBandwidth / (m_boundWeightBytes + m_boundCacheBytes * length);
}

void EngineGenerationBackend::unload()
{
    resetState();
    if (m_backendDirty) {
        try {
            makeBackend();
        } catch (const std::exception &) {
            // Keep the old backend object; the next load tries again.
        }
    }
}

std::string EngineGenerationBackend::formatPrompt(const QList<ChatTurn> &conversation) const
{
    return m_prompt->text(toMessages(conversation));
}

std::vector<std::int32_t> EngineGenerationBackend::promptIds(const QList<ChatTurn> &conversation) const
{
    if (!m_model)
        throw std::runtime_error(tr("No model is loaded.").toStdString());
    return m_prompt->ids(toMessages(conversation));
}

PrefillResult EngineGenerationBackend::prefill(const QList<ChatTurn> &conversation, const SamplingSettings &settings)
{
    const std::vector<std::int32_t> ids = promptIds(conversation);
    m_finished = true;
    m_pending.reset();
    m_replyIds.clear();
    const int capacity = m_backend->cache_capacity();
    if (ids.empty())
        throw std::runtime_error(tr("The conversation is empty.").toStdString());
    if (int(ids.size()) >= capacity)
        throw std::runtime_error(tr("The conversation (%1 tokens) does not fit the context of %2 tokens. Start a new "
                                    "chat or load the model with a longer context.")
                                     .arg(ids.size()).arg(capacity).toStdString());

    // The engine keeps the K/V of the longest cached prefix of this prompt (earlier turns, other
    // chats' shared prefixes); always run at least the last prompt token, whose logits pick the
    // first reply token.
    const std::size_t common = std::size_t(m_backend->reuse_prefix(ids, int(ids.size()) - 1));
    m_contextIds = ids;
    exl::prefill(*m_backend, std::span<const std::int32_t>(ids).subspan(common), m_maxChunk,
                 exl::LogitsWanted::last, m_logits);

    exl::SamplerSettings s;
    s.greedy = settings.temperature <= 0.0;
    s.temperature = float(settings.temperature);
    s.top_k = std::max(0, settings.topK);
    s.top_p = float(settings.topP);
    s.min_p = float(settings.minP);
    s.seed = settings.seed >= 0 ? std::uint64_t(settings.seed) : (std::uint64_t(m_entropy()) << 32 | m_entropy());
    m_sampler = std::make_unique<exl::Sampler>(s);
    m_repetitionPenalty = s.greedy ? 1.0 : settings.repetitionPenalty;
    m_stream = std::make_unique<exl::StreamDecoder>(m_tokenizer, true);
    m_finished = false;
    return {int(ids.size()), int(common)};
}

std::int32_t EngineGenerationBackend::sampleNext()
{
    const std::size_t vocab = std::size_t(m_backend->vocab_size());
    std::span<const float> row(m_logits.data(), std::min(vocab, m_logits.size()));
    if (m_repetitionPenalty <= 1.0)
        return m_sampler->sample(row);
    std::vector<float> penalised(row.begin(), row.end());
    const std::size_t from = m_contextIds.size() > kPenaltyWindow ? m_contextIds.size() - kPenaltyWindow : 0;
    for (std::size_t i = from; i < m_contextIds.size(); ++i) {
        const std::size_t id = std::size_t(m_contextIds[i]);
        if (id < penalised.size()) {
            float &l = penalised[id];
            // Applied once per id however often it occurs (as in transformers).
            if (std::find(m_contextIds.begin() + std::ptrdiff_t(from), m_contextIds.begin() + std::ptrdiff_t(i),
                          m_contextIds[i]) == m_contextIds.begin() + std::ptrdiff_t(i))
                l = l > 0 ? float(l / m_repetitionPenalty) : float(l * m_repetitionPenalty);
        }
    }
    return m_sampler->sample(penalised);
}

std::optional<QString> EngineGenerationBackend::decodeStep()
{
    if (m_finished || !m_model)
        return std::nullopt;
    if (m_pending) {
        if (m_backend->cache_length() >= m_backend->cache_capacity()) {
            m_finished = true;  // the context is full
            const std::string rest = m_stream->flush();
            return rest.empty() ? std::nullopt : std::optional<QString>(QString::fromStdString(rest));
        }
        m_backend->forward(std::span<const std::int32_t>(&*m_pending, 1), exl::LogitsWanted::last, m_logits);
        m_contextIds.push_back(*m_pending);
        m_pending.reset();
    }
    const std::int32_t id = sampleNext();
    if (std::find(m_stopIds.begin(), m_stopIds.end(), id) != m_stopIds.end()) {
        m_finished = true;
        const std::string rest = m_stream->flush();
        return rest.empty() ? std::nullopt : std::optional<QString>(QString::fromStdString(rest));
    }
    m_replyIds.push_back(id);
    m_pending = id;
    return QString::fromStdString(m_stream->push(id));
}

GenerationBackend::VramUsage EngineGenerationBackend::vram() const
{
    VramUsage v;
    if (!m_backend)
        return v;
    const exl::MemoryStats m = m_backend->memory();  // one device query (cudaMemGetInfo) per call
    if (m.device_total == 0) {
        v.used = qint64(m.weights_bytes + m.cache_bytes + m.scratch_bytes);  // the CPU backend's own
        return v;
    }
    v.total = qint64(m.device_total);
    v.used = qint64(m.device_total - std::min(m.device_free, m.device_total));
    v.weights = qint64(m.weights_bytes);
    v.cache = qint64(m.cache_bytes);
    return v;
}
