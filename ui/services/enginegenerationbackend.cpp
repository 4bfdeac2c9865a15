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

constexpr int kPenaltyWindow = 256;  // recent ids the repetition penalty looks at

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
    options.split = m_split;
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
    // A layer split: the other GPUs holding layers, with their weights and cache.
    const exl::MemoryStats mem = m_backend && m_split.size() > 1 ? m_backend->memory() : exl::MemoryStats{};
    for (const exl::GpuMemoryInfo &d : m_power->devices()) {
        if (d.index == g.index) {
            g.name = QString::fromStdString(d.name);
            continue;
        }
        GpuMemorySample o{d.index, QString::fromStdString(d.name), qint64(d.used_bytes), qint64(d.total_bytes)};
        for (const exl::DeviceMemoryStats &s : mem.devices) {
            if (s.device != d.index)
                continue;
            o.engine = true;
            o.weightsBytes += qint64(s.weights_bytes);
            o.cacheBytes += qint64(s.cache_bytes);
        }
        g.otherGpus.append(o);
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
    m_session.reset();  // before the backends it refers to
    m_replyIds.clear();
    m_stream.reset();
    m_finished = true;
    m_requestDraftTokens = 0;
    m_draftBackend.reset();
    m_draftModel.reset();
    m_loadDraftTokens = 0;
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
        if (!options.draftModelPath.isEmpty()) {
            // Checked before the weights load: a draft of another vocabulary is refused at once.
            const QString draftFolder = QFileInfo(options.draftModelPath).fileName();
            std::shared_ptr<const exl::Model> draft;
            try {
                draft = exl::Model::open(QFile::encodeName(options.draftModelPath).toStdString());
                if (!draft->tokenizer())
                    return {false, {}, tr("The draft model %1 has no tokenizer.json, so its vocabulary cannot be checked.").arg(draftFolder), {}};
                exl::check_draft_vocabulary(*model->tokenizer(), *draft->tokenizer());
            } catch (const exl::Error &e) {
                return {false, {}, tr("%1 cannot be the draft model of %2: %3").arg(draftFolder, folder, QString::fromUtf8(e.what())), {}};
            }
            m_draftModel = std::move(draft);
        }
        progress(0.1);
        const int chunk = std::clamp(options.maxChunkSize, 16, 8192);
        std::vector<exl::LayerSegment> split;
        try {
            split = resolveSplit(path, options);
        } catch (const exl::Error &e) {
            return {false, {}, tr("The GPU split \"%1\" cannot hold %2: %3").arg(options.gpuSplit, folder, QString::fromUtf8(e.what())), {}};
        }
        const auto sameSplit = [&] {
            if (split.size() != m_split.size())
                return false;
            for (std::size_t i = 0; i < split.size(); ++i)
                if (split[i].device != m_split[i].device || split[i].layers != m_split[i].layers
                    || split[i].vram_limit != m_split[i].vram_limit)
                    return false;
            return true;
        };
        if (m_backendDirty || chunk != m_maxChunk || !sameSplit()) {
            m_maxChunk = chunk;
            m_split = std::move(split);
            makeBackend();
        }
        m_backendDirty = true;
        m_backend->load(model);
        progress(0.9);
        m_backend->allocate_cache({std::max(16, options.contextLength), cacheType(options.cacheKind)});
        if (m_draftModel) {
            progress(0.92);
            try {
                loadDraft(options);
            } catch (const exl::Error &e) {
                const QString draftFolder = QFileInfo(options.draftModelPath).fileName();
                result.errorMessage = e.kind() == exl::ErrorKind::out_of_memory
                    ? tr("Out of memory while loading the draft model %1: %2. Try a shorter context, a smaller cache "
                         "type or no draft model.").arg(draftFolder, QString::fromUtf8(e.what()))
                    : tr("Could not load the draft model %1: %2").arg(draftFolder, QString::fromUtf8(e.what()));
                unload();
                return result;
            }
        }
        m_loadDraftTokens = std::clamp(options.draftTokens, 0, kMaxDraftTokens);
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

void EngineGenerationBackend::loadDraft(const LoadOptions &options)
{
    exl::BackendOptions o;
    o.max_chunk_size = m_maxChunk;
    o.threads = m_threads;
    m_draftBackend = exl::make_backend(exl::draft_device(*m_backend), o);  // the model's GPU with the most room
    m_draftBackend->load(m_draftModel);
    m_draftBackend->allocate_cache({m_backend->cache_capacity(), cacheType(options.cacheKind)});
}

std::vector<exl::LayerSegment> EngineGenerationBackend::resolveSplit(const QString &path, const LoadOptions &options) const
{
    const QString text = options.gpuSplit.trimmed();
    if (text.isEmpty() || m_device == "cpu" || !exl::cuda_available())
        return {};
    namespace plan = exl::plan;
    plan::PlanOptions o;
    for (const exl::CudaDeviceInfo &d : exl::cuda_devices()) {  // as the fit calculator sees them
        o.gpus.push_back(plan::gpu_spec_for_device(d.name, d.total_bytes, d.peak_bandwidth_gbs));
        if (o.gpus.size() == 1)
            o.sm_count = d.sm_count;
    }
    o.context = std::max(16, options.contextLength);
    o.cache = planCacheSpec(options.cacheKind);
    o.max_chunk = std::clamp(options.maxChunkSize, 16, 8192);
    return plan::resolve_split(text.toStdString(), plan::shape_from_folder(QFile::encodeName(path).toStdString(), plan::Layout::engine), o);
}

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
            m_boundBandwidth = exl::plan::host_copy_bandwidth_gbs() * 1e9;  // the planner's figure too
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
    m_session.reset();
    m_replyIds.clear();
    const int capacity = m_backend->cache_capacity();
    if (ids.empty())
        throw std::runtime_error(tr("The conversation is empty.").toStdString());
    if (int(ids.size()) >= capacity)
        throw std::runtime_error(tr("The conversation (%1 tokens) does not fit the context of %2 tokens. Start a new "
                                    "chat or load the model with a longer context.")
                                     .arg(ids.size()).arg(capacity).toStdString());

    exl::GenerateOptions o;
    exl::SamplerSettings &s = o.sampler;
    s.greedy = settings.temperature <= 0.0;
    s.temperature = float(settings.temperature);
    s.top_k = std::max(0, settings.topK);
    s.top_p = float(settings.topP);
    s.min_p = float(settings.minP);
    s.seed = settings.seed >= 0 ? std::uint64_t(settings.seed) : (std::uint64_t(m_entropy()) << 32 | m_entropy());
    // Over the last kPenaltyWindow ids, once per distinct id (as in transformers); greedy replies
    // are not penalised.
    s.repetition_penalty = s.greedy ? 1.0f : float(settings.repetitionPenalty);
    s.penalty_range = kPenaltyWindow;
    o.max_new_tokens = std::max(0, settings.maxNewTokens);
    o.max_chunk_size = m_maxChunk;
    o.stop_ids = m_stopIds;  // the tokenizer's EOS ids are added by the session
    m_requestDraftTokens = std::clamp(settings.draftTokens >= 0 ? settings.draftTokens : m_loadDraftTokens, 0,
                                      kMaxDraftTokens);
    if (m_requestDraftTokens > 0) {
        o.draft_tokens = m_requestDraftTokens;
        if (m_draftBackend)
            o.draft = m_draftBackend.get();
        else
            o.ngram = true;  // no draft model: prompt lookup in the conversation
    }
    // The engine keeps the K/V of the longest cached prefix of this prompt (earlier turns, other
    // chats' shared prefixes) on both models, and always runs the last prompt token, whose
    // logits pick the first reply token.
    auto session = std::make_unique<exl::DecodeSession>(*m_backend, m_tokenizer.get(), o);
    session->start(ids);
    m_session = std::move(session);
    m_maxNewTokens = o.max_new_tokens;
    m_stream = std::make_unique<exl::StreamDecoder>(m_tokenizer, true);
    m_finished = m_maxNewTokens == 0;
    return {int(ids.size()), m_session->cached_tokens()};
}

std::optional<DecodedPiece> EngineGenerationBackend::decodeStep()
{
    if (m_finished || !m_model || !m_session)
        return std::nullopt;
    DecodedPiece out;
    out.tokens = 0;
    std::string text;
    std::size_t draftBytes = 0;  // text of the accepted drafts: they come first in a step
    const exl::DecodeStepResult step = m_session->step(
        m_maxNewTokens - int(m_replyIds.size()), [&](std::int32_t id, bool fromDraft) {
            m_replyIds.push_back(id);
            ++out.tokens;
            text += m_stream->push(id);
            if (fromDraft)
                draftBytes = text.size();
            return true;
        });
    out.targetPass = step.target_pass;
    out.draftedTokens = step.drafted;
    out.acceptedDraftTokens = step.accepted;
    if (step.end != exl::DecodeStepResult::End::more || int(m_replyIds.size()) >= m_maxNewTokens) {
        m_finished = true;  // a stop id, the context full, or the longest reply asked for
        text += m_stream->flush();
    }
    if (out.tokens == 0 && text.empty())
        return std::nullopt;
    out.text = QString::fromStdString(text);
    out.draftTextLength = draftBytes > 0 ? int(QString::fromUtf8(text.data(), qsizetype(draftBytes)).size()) : 0;
    return out;
}

std::vector<std::int32_t> EngineGenerationBackend::contextIds() const
{
    if (!m_session || m_session->context().empty())
        return {};
    const std::vector<std::int32_t> &all = m_session->context();
    return {all.begin(), all.end() - 1};
}

int EngineGenerationBackend::cacheLength() const
{
    return m_backend ? m_backend->cache_length() : 0;
}

int EngineGenerationBackend::draftedTokens() const
{
    return m_session ? m_session->drafted_tokens() : 0;
}

int EngineGenerationBackend::acceptedDraftTokens() const
{
    return m_session ? m_session->accepted_draft_tokens() : 0;
}

int EngineGenerationBackend::targetPasses() const
{
    return m_session ? m_session->target_passes() : 0;
}

GenerationBackend::VramUsage EngineGenerationBackend::vram() const
{
    VramUsage v;
    if (!m_backend)
        return v;
    const exl::MemoryStats m = m_backend->memory();  // one device query (cudaMemGetInfo) per call
    if (m.device_total == 0) {
        v.used = qint64(m.weights_bytes + m.cache_bytes + m.scratch_bytes);  // the CPU backend's own
        if (m_draftBackend) {
            const exl::MemoryStats d = m_draftBackend->memory();
            v.used += qint64(d.weights_bytes + d.cache_bytes + d.scratch_bytes);
        }
        return v;
    }
    v.total = qint64(m.device_total);
    v.used = qint64(m.device_total - std::min(m.device_free, m.device_total));
    v.weights = qint64(m.weights_bytes);
    v.cache = qint64(m.cache_bytes);
    if (m.devices.size() > 1) {  // a layer split: this meter is its first GPU's (gpuStatus() has the others)
        const exl::DeviceMemoryStats &first = m.devices.front();
        v.total = qint64(first.device_total);
        v.used = qint64(first.device_total - std::min(first.device_free, first.device_total));
        v.weights = v.cache = 0;
        for (const exl::DeviceMemoryStats &d : m.devices) {
            if (d.device != first.device)
                continue;
            v.weights += qint64(d.weights_bytes);
            v.cache += qint64(d.cache_bytes);
        }
    }
    if (m_draftBackend) {  // the draft model's weights and cache, on the same device
        const exl::MemoryStats d = m_draftBackend->memory();
        v.weights += qint64(d.weights_bytes);
        v.cache += qint64(d.cache_bytes);
    }
    return v;
}
