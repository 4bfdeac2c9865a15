#include "workerinferenceservice.h"

#include <limits>

#include "inferenceworker.h"

namespace {
void registerValueTypes()
{
    qRegisterMetaType<ChatTurn>();
    qRegisterMetaType<QList<ChatTurn>>();
    qRegisterMetaType<LoadOptions>();
    qRegisterMetaType<SamplingSettings>();
    qRegisterMetaType<ModelInfo>();
    qRegisterMetaType<TokenBatch>();
    qRegisterMetaType<GenerationStats>();
    qRegisterMetaType<TelemetrySample>();
    qRegisterMetaType<LoadResult>();
}
}  // namespace

WorkerInferenceService::WorkerInferenceService(std::unique_ptr<GenerationBackend> backend, QObject *parent)
    : InferenceService(parent)
{
    registerValueTypes();
    // Read the static facts now: afterwards the backend belongs to the inference thread.
    m_models = backend->availableModels();
    m_deviceName = backend->deviceName();
    m_deviceNote = backend->deviceNote();

    m_worker = new InferenceWorker(std::move(backend));
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    connect(m_worker, &InferenceWorker::tokensArrived, this, &InferenceService::tokensArrived);
    connect(m_worker, &InferenceWorker::generationFinished, this, &InferenceService::generationFinished);
    connect(m_worker, &InferenceWorker::error, this, &InferenceService::error);
    connect(m_worker, &InferenceWorker::telemetry, this, &InferenceService::telemetry);
    connect(m_worker, &InferenceWorker::loadProgress, this, &InferenceService::loadProgress);
    connect(m_worker, &InferenceWorker::loadFinished, this, [this](const LoadResult &result) {
        Q_EMIT loadFinished(result);
        if (result.ok)
            Q_EMIT modelLoaded(result.info);
    });
    m_thread.setObjectName(QStringLiteral("inference"));
    m_thread.start();
}

WorkerInferenceService::~WorkerInferenceService()
{
    m_worker->cancelUpTo(std::numeric_limits<quint64>::max());
    m_thread.quit();
    m_thread.wait();
}

void WorkerInferenceService::loadModel(const QString &path, const LoadOptions &options)
{
    QMetaObject::invokeMethod(m_worker, "load", Qt::QueuedConnection, Q_ARG(QString, path),
                              Q_ARG(LoadOptions, options));
}

void WorkerInferenceService::unloadModel()
{
    QMetaObject::invokeMethod(m_worker, "unload", Qt::QueuedConnection);
    Q_EMIT modelUnloaded();
}

quint64 WorkerInferenceService::generate(const QList<ChatTurn> &conversation, const SamplingSettings &settings)
{
    const quint64 id = ++m_nextRequestId;
    QMetaObject::invokeMethod(m_worker, "generate", Qt::QueuedConnection, Q_ARG(quint64, id),
                              Q_ARG(QList<ChatTurn>, conversation), Q_ARG(SamplingSettings, settings));
    return id;
}

void WorkerInferenceService::cancel(quint64 requestId)
{
    m_worker->cancelUpTo(requestId);
}
