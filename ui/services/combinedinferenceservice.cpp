#include "combinedinferenceservice.h"

CombinedInferenceService::CombinedInferenceService(std::unique_ptr<InferenceService> local,
                                                   std::unique_ptr<RemoteInferenceService> remote, QObject *parent)
    : InferenceService(parent)
    , m_local(std::move(local))
    , m_remote(std::move(remote))
    , m_active(m_local.get())
{
    follow(m_local.get());
    follow(m_remote.get());
}

CombinedInferenceService::~CombinedInferenceService()
{
    // Nothing of either side reaches the listeners of this object from here on.
    m_local->disconnect(this);
    m_remote->disconnect(this);
}

void CombinedInferenceService::follow(InferenceService *side)
{
    connect(side, &InferenceService::tokensArrived, this, [this, side](const TokenBatch &batch) {
        if (const quint64 id = outerId(side, batch.requestId)) {
            TokenBatch outer = batch;
            outer.requestId = id;
            Q_EMIT tokensArrived(outer);
        }
    });
    connect(side, &InferenceService::generationFinished, this, [this, side](const GenerationStats &stats) {
        if (const quint64 id = outerId(side, stats.requestId)) {
            GenerationStats outer = stats;
            outer.requestId = id;
            m_requests.erase(id);
            Q_EMIT generationFinished(outer);
        }
    });
    connect(side, &InferenceService::error, this, [this, side](quint64 requestId, const QString &message) {
        const quint64 id = requestId ? outerId(side, requestId) : 0;
        m_requests.erase(id);
        if (requestId == 0 || id != 0)
            Q_EMIT error(id, message);
    });
    connect(side, &InferenceService::telemetry, this, [this, side](const TelemetrySample &sample) {
        if (side == m_active)
            Q_EMIT telemetry(sample);
    });
    connect(side, &InferenceService::loadProgress, this, &InferenceService::loadProgress);
    connect(side, &InferenceService::loadFinished, this, &InferenceService::loadFinished);
    connect(side, &InferenceService::modelLoaded, this, &InferenceService::modelLoaded);
    connect(side, &InferenceService::modelUnloaded, this, [this, side] {
        if (side == m_active)
            Q_EMIT modelUnloaded();
    });
    connect(side, &InferenceService::availableModelsChanged, this, &InferenceService::availableModelsChanged);
}

quint64 CombinedInferenceService::outerId(InferenceService *side, quint64 innerId) const
{
    for (const auto &[outer, inner] : m_requests) {
        if (inner.first == side && inner.second == innerId)
            return outer;
    }
    return 0;
}

QList<ModelInfo> CombinedInferenceService::availableModels() const
{
    return m_local->availableModels() + m_remote->availableModels();
}

void CombinedInferenceService::loadModel(const QString &path, const LoadOptions &options)
{
    InferenceService *target = RemoteInferenceService::isRemotePath(path) ? static_cast<InferenceService *>(m_remote.get())
                                                                          : m_local.get();
    if (target != m_active) {
        m_active->unloadModel();  // one model at a time: a local model frees its memory
        m_active = target;
    }
    target->loadModel(path, options);
}

void CombinedInferenceService::unloadModel()
{
    m_active->unloadModel();
}

quint64 CombinedInferenceService::generate(const QList<ChatTurn> &conversation, const SamplingSettings &settings)
{
    const quint64 id = ++m_nextRequestId;
    m_requests[id] = {m_active, m_active->generate(conversation, settings)};
    return id;
}

void CombinedInferenceService::cancel(quint64 requestId)
{
    const auto it = m_requests.find(requestId);
    if (it != m_requests.end())
        it->second.first->cancel(it->second.second);
}
