// InferenceService for models served by OpenAI-compatible endpoints (another EXL Studio's
// `exl serve`, TabbyAPI, vLLM, a llama.cpp server). Everything runs on the GUI thread without
// blocking it: Qt Network requests awaited with QCoro, the event stream of
// POST /v1/chat/completions parsed as its bytes arrive. "Loading" a remote model selects it.
// Failures (connection refused, timeouts, HTTP 401/429/5xx, malformed events, a dropped
// connection) end the request with an error() message; cancel() aborts the HTTP request.
#pragma once
#include <QElapsedTimer>
#include <QNetworkAccessManager>
#include <QPointer>
#include <map>
#include <memory>
#include <optional>
#include <qcoro/qcorotask.h>

#include "inferenceservice.h"
#include "remoteendpoint.h"

class QNetworkReply;

struct RemoteOptions {
    int timeoutMs = 60000;  // a request with no data for this long is stopped (connect, first token, stall)
};

class RemoteInferenceService : public InferenceService
{
    Q_OBJECT
public:
    explicit RemoteInferenceService(QList<RemoteEndpoint> endpoints = {}, RemoteOptions options = {},
                                    QObject *parent = nullptr);
    ~RemoteInferenceService() override;

    QList<ModelInfo> availableModels() const override { return m_models; }
    QString deviceName() const override { return QStringLiteral("remote"); }
    QString deviceNote() const override;
    void loadModel(const QString &path, const LoadOptions &options) override;
    void unloadModel() override;
    quint64 generate(const QList<ChatTurn> &conversation, const SamplingSettings &settings) override;
    void cancel(quint64 requestId) override;

    QList<RemoteEndpoint> endpoints() const { return m_endpoints; }
    // Replaces the endpoints and lists their models again.
    void setEndpoints(const QList<RemoteEndpoint> &endpoints);
    // Lists every endpoint's models (GET /v1/models); completes with the errors ("" when none).
    QCoro::Task<QString> refreshModels();
    QString listError() const { return m_listError; }
    // A remote model's path: "<base URL>#<model id>".
    static QString modelPath(const RemoteEndpoint &endpoint, const QString &modelId);
    static bool isRemotePath(const QString &path);
    RemoteOptions options() const { return m_options; }

private:
    struct Request;

    QCoro::Task<> loadTask(QString path);
    QCoro::Task<> runRequest(quint64 id, QList<ChatTurn> conversation, SamplingSettings settings,
                             ModelInfo model, RemoteEndpoint endpoint);
    void onReadyRead(quint64 id);
    void flushText(Request &r);
    void emitTelemetry(Request &r, bool force);
    GenerationStats statsOf(const Request &r) const;
    QString failureMessage(const Request &r, QNetworkReply *reply, const QByteArray &body) const;
    QNetworkRequest jsonRequest(const RemoteEndpoint &endpoint, const QString &route) const;
    std::optional<RemoteEndpoint> endpointOf(const ModelInfo &model) const;

    QNetworkAccessManager m_network;
    RemoteOptions m_options;
    QList<RemoteEndpoint> m_endpoints;
    QList<ModelInfo> m_models;
    QString m_listError;
    std::optional<ModelInfo> m_loaded;
    std::map<quint64, std::unique_ptr<Request>> m_requests;
    quint64 m_nextRequestId = 0;
    quint64 m_refreshGeneration = 0;  // only the latest refresh publishes its list
    quint64 m_cancelledUpTo = 0;  // requests not started yet are cancelled up to this id
    QElapsedTimer m_clock;
    bool m_closing = false;
};
