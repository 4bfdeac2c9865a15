// InferenceService that owns the inference thread: a GenerationBackend runs inside an
// InferenceWorker on that thread, and the worker's signals reach the GUI thread queued.
#pragma once
#include <QThread>
#include <memory>

#include "generationbackend.h"
#include "inferenceservice.h"

class InferenceWorker;

class WorkerInferenceService : public InferenceService
{
    Q_OBJECT
public:
    explicit WorkerInferenceService(std::unique_ptr<GenerationBackend> backend, QObject *parent = nullptr);
    ~WorkerInferenceService() override;

    QList<ModelInfo> availableModels() const override { return m_models; }
    QString deviceName() const override { return m_deviceName; }
    QString deviceNote() const override { return m_deviceNote; }

    void loadModel(const QString &path, const LoadOptions &options) override;
    void unloadModel() override;
    quint64 generate(const QList<ChatTurn> &conversation, const SamplingSettings &settings) override;
    void cancel(quint64 requestId) override;

private:
    QThread m_thread;
    InferenceWorker *m_worker = nullptr;  // lives on m_thread, deleted when it finishes
    QList<ModelInfo> m_models;
    QString m_deviceName;
    QString m_deviceNote;
    quint64 m_nextRequestId = 0;
};
