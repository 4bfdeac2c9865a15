// The app's InferenceService when remote endpoints are configured: local models through the
// local service (the engine on the inference thread), remote models through the
// RemoteInferenceService. The model that was loaded last decides which one answers; request
// ids are the combined service's own, so late signals of either side never mix.
#pragma once
#include <QPointer>
#include <map>
#include <memory>

#include "inferenceservice.h"
#include "remoteinferenceservice.h"

class CombinedInferenceService : public InferenceService
{
    Q_OBJECT
public:
    CombinedInferenceService(std::unique_ptr<InferenceService> local, std::unique_ptr<RemoteInferenceService> remote,
                             QObject *parent = nullptr);
    ~CombinedInferenceService() override;

    QList<ModelInfo> availableModels() const override;
    QString deviceName() const override { return m_local->deviceName(); }
    QString deviceNote() const override { return m_local->deviceNote(); }
    void loadModel(const QString &path, const LoadOptions &options) override;
    void unloadModel() override;
    quint64 generate(const QList<ChatTurn> &conversation, const SamplingSettings &settings) override;
    void cancel(quint64 requestId) override;

    InferenceService *local() const { return m_local.get(); }
    RemoteInferenceService *remote() const { return m_remote.get(); }

private:
    void follow(InferenceService *side);
    quint64 outerId(InferenceService *side, quint64 innerId) const;

    std::unique_ptr<InferenceService> m_local;
    std::unique_ptr<RemoteInferenceService> m_remote;
    InferenceService *m_active = nullptr;
    quint64 m_nextRequestId = 0;
    std::map<quint64, std::pair<InferenceService *, quint64>> m_requests;  // outer id -> side, inner id
};
