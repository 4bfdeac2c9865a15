#include "remoteinferenceservice.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkReply>
#include <qcoro/qcoronetworkreply.h>
#include <qcoro/qcorotimer.h>

#include "ssestream.h"
#include "tokenbatcher.h"

namespace {
constexpr qint64 kTelemetryIntervalMs = 250;

double seconds(qint64 ms)
{
    return double(ms) / 1000.0;
}

// Lets the caller of loadModel() / generate() return before any signal of the call is emitted.
QCoro::Task<> nextEventLoopPass()
{
    co_await QCoro::sleepFor(std::chrono::milliseconds(0));
}

// Deletes a reply later unless its manager already did (replies are the manager's children).
struct ReplyGuard {
    QPointer<QNetworkReply> reply;
    ~ReplyGuard()
    {
        if (reply)
            reply->deleteLater();
    }
};
}  // namespace

struct RemoteInferenceService::Request {
    quint64 id = 0;
    QString endpointName;
    QPointer<QNetworkReply> reply;
    SseParser parser;
    TokenBatcher batcher;
    qint64 startMs = 0;
    std::optional<qint64> firstTokenMs;
    qint64 lastTokenMs = 0;
    int pieces = 0;             // content chunks received (tokens, when the server reports no usage)
    QString finishReason;       // why the server ended the reply ("stop", "length"), when it says
    int usageTokens = -1;       // usage.completion_tokens, when reported
    int promptTokens = 0;
    qint64 lastTelemetryMs = 0;
    bool cancelled = false;
    bool stopReading = false;   // an error was found in the stream: ignore the rest
    QString streamError;
};

RemoteInferenceService::RemoteInferenceService(QList<RemoteEndpoint> endpoints, RemoteOptions options,
                                               QObject *parent)
    : InferenceService(parent)
    , m_options(options)
    , m_endpoints(std::move(endpoints))
{
    m_clock.start();
    // Certificates are verified (Qt's default); no sslErrors handler ignores them.
    m_network.setRedirectPolicy(QNetworkRequest::NoLessSafeRedirectPolicy);
    if (!m_endpoints.isEmpty())
        refreshModels();
}

RemoteInferenceService::~RemoteInferenceService()
{
    // The pending coroutines resume once more (their replies finish) and then stop.
    m_closing = true;
    for (auto &[id, request] : m_requests) {
        if (request->reply)
            request->reply->abort();
    }
}

QString RemoteInferenceService::deviceNote() const
{
    return tr("Remote models run on their server: speeds are measured by this app, and there is no VRAM meter "
              "or bandwidth-bound line.");
}

QString RemoteInferenceService::modelPath(const RemoteEndpoint &endpoint, const QString &modelId)
{
    return endpoint.baseUrl.toString() + QLatin1Char('#') + modelId;
}

bool RemoteInferenceService::isRemotePath(const QString &path)
{
    return path.startsWith(QLatin1String("https://")) || path.startsWith(QLatin1String("http://"));
}

void RemoteInferenceService::setEndpoints(const QList<RemoteEndpoint> &endpoints)
{
    m_endpoints = endpoints;
    refreshModels();
}

QNetworkRequest RemoteInferenceService::jsonRequest(const RemoteEndpoint &endpoint, const QString &route) const
{
    QUrl url = endpoint.baseUrl;
    url.setPath(url.path() + QLatin1Char('/') + route);
    QNetworkRequest request(url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    request.setRawHeader("Accept", route == QLatin1String("models") ? "application/json" : "text/event-stream");
    if (!endpoint.apiKey.isEmpty())
        request.setRawHeader("Authorization", "Bearer " + endpoint.apiKey.toUtf8());
    request.setTransferTimeout(m_options.timeoutMs);
    request.setAttribute(QNetworkRequest::CacheLoadControlAttribute, QNetworkRequest::AlwaysNetwork);
    return request;
}

std::optional<RemoteEndpoint> RemoteInferenceService::endpointOf(const ModelInfo &model) const
{
    for (const RemoteEndpoint &e : m_endpoints) {
        if (model.path.startsWith(e.baseUrl.toString() + QLatin1Char('#')))
            return e;
    }
    return std::nullopt;
}

QCoro::Task<QString> RemoteInferenceService::refreshModels()
{
    QPointer<RemoteInferenceService> self(this);
    const QList<RemoteEndpoint> endpoints = m_endpoints;
    const quint64 generation = ++m_refreshGeneration;
    QList<ModelInfo> models;
    QStringList errors;
    for (const RemoteEndpoint &endpoint : endpoints) {
        const ReplyGuard guard{m_network.get(jsonRequest(endpoint, QStringLiteral("models")))};
        QNetworkReply *reply = guard.reply.data();
        co_await reply;
        if (!self || m_closing || !guard.reply)
            co_return {};
        const QByteArray body = reply->isOpen() ? reply->readAll() : QByteArray();
        Request r;
        r.endpointName = endpoint.name;
        if (reply->error() != QNetworkReply::NoError) {
            errors.append(failureMessage(r, reply, body));
            continue;
        }
        const QJsonValue data = QJsonDocument::fromJson(body).object().value(QLatin1String("data"));
        if (!data.isArray()) {
            errors.append(tr("%1 answered GET /v1/models with something that is not a model list.").arg(endpoint.name));
            continue;
        }
        for (const QJsonValue &v : data.toArray()) {
            const QString id = v.toObject().value(QLatin1String("id")).toString();
            if (id.isEmpty())
                continue;
            ModelInfo info;
            info.path = modelPath(endpoint, id);
            info.name = id;
            info.architecture = tr("remote");
            info.remote = true;
            info.endpointName = endpoint.name;
            info.note = RemoteEndpointRules::noteFor(endpoint.baseUrl);
            models.append(info);
        }
    }
    if (generation != m_refreshGeneration)
        co_return errors.join(QLatin1Char('\n'));  // a newer refresh publishes its list
    m_models = models;
    m_listError = errors.join(QLatin1Char('\n'));
    Q_EMIT availableModelsChanged();
    co_return QString(m_listError);  // a copy: QCoro's return_value() moves from what it is given
}

void RemoteInferenceService::loadModel(const QString &path, const LoadOptions &)
{
    loadTask(path);
}

QCoro::Task<> RemoteInferenceService::loadTask(QString path)
{
    QPointer<RemoteInferenceService> self(this);
    co_await nextEventLoopPass();
    if (!self || m_closing)
        co_return;
    const auto find = [this, &path]() -> std::optional<ModelInfo> {
        for (const ModelInfo &m : m_models) {
            if (m.path == path)
                return m;
        }
        return std::nullopt;
    };
    if (!find()) {
        co_await refreshModels();  // the list may be out of date
        if (!self || m_closing)
            co_return;
    }
    LoadResult result;
    if (const std::optional<ModelInfo> model = find()) {
        result.ok = true;
        result.info = *model;
        result.notice = model->note;
        m_loaded = *model;
    } else {
        result.errorMessage = m_listError.isEmpty()
            ? tr("The endpoint does not offer the model %1.").arg(path.section(QLatin1Char('#'), 1))
            : m_listError;
        m_loaded.reset();
    }
    Q_EMIT loadProgress(1.0);
    Q_EMIT loadFinished(result);
    if (result.ok)
        Q_EMIT modelLoaded(result.info);
    TelemetrySample sample;
    sample.timeSeconds = seconds(m_clock.elapsed());
    sample.remote = true;
    Q_EMIT telemetry(sample);
}

void RemoteInferenceService::unloadModel()
{
    m_loaded.reset();
    cancel(m_nextRequestId);
    Q_EMIT modelUnloaded();
}

quint64 RemoteInferenceService::generate(const QList<ChatTurn> &conversation, const SamplingSettings &settings)
{
    const quint64 id = ++m_nextRequestId;
    const ModelInfo model = m_loaded.value_or(ModelInfo{});
    runRequest(id, conversation, settings, model, endpointOf(model).value_or(RemoteEndpoint{}));
    return id;
}

void RemoteInferenceService::cancel(quint64 requestId)
{
    m_cancelledUpTo = std::max(m_cancelledUpTo, requestId);
    for (auto &[id, request] : m_requests) {
        if (id > requestId || request->cancelled)
            continue;
        request->cancelled = true;
        // Queued: the request's coroutine must not resume inside the caller (e.g. ChatViewModel::stop).
        if (request->reply)
            QMetaObject::invokeMethod(request->reply.data(), &QNetworkReply::abort, Qt::QueuedConnection);
    }
}

QCoro::Task<> RemoteInferenceService::runRequest(quint64 id, QList<ChatTurn> conversation,
                                                 SamplingSettings settings, ModelInfo model,
                                                 RemoteEndpoint endpoint)
{
    QPointer<RemoteInferenceService> self(this);
    co_await nextEventLoopPass();
    if (!self || m_closing)
        co_return;
    if (id <= m_cancelledUpTo) {
        GenerationStats stats;
        stats.requestId = id;
        stats.cancelled = true;
        Q_EMIT generationFinished(stats);
        co_return;
    }
    if (model.path.isEmpty() || endpoint.baseUrl.isEmpty()) {
        Q_EMIT error(id, tr("No model is loaded."));
        co_return;
    }

    QJsonArray messages;
    for (const ChatTurn &turn : conversation)
        messages.append(QJsonObject{{QStringLiteral("role"), turn.role}, {QStringLiteral("content"), turn.text}});
    QJsonObject body{{QStringLiteral("model"), model.name},
                     {QStringLiteral("messages"), messages},
                     {QStringLiteral("stream"), true},
                     {QStringLiteral("stream_options"), QJsonObject{{QStringLiteral("include_usage"), true}}},
                     {QStringLiteral("temperature"), settings.temperature},
                     {QStringLiteral("top_p"), settings.topP}};
    // Not in OpenAI's API, understood by the self-hosted servers (vLLM, llama.cpp, TabbyAPI, exl serve).
    if (settings.maxNewTokens > 0)  // none: until the model's context is full
        body.insert(QStringLiteral("max_tokens"), settings.maxNewTokens);
    if (settings.topK > 0)
        body.insert(QStringLiteral("top_k"), settings.topK);
    if (settings.minP > 0.0)
        body.insert(QStringLiteral("min_p"), settings.minP);
    if (settings.repetitionPenalty != 1.0)
        body.insert(QStringLiteral("repetition_penalty"), settings.repetitionPenalty);
    if (settings.seed >= 0)
        body.insert(QStringLiteral("seed"), settings.seed);

    auto owned = std::make_unique<Request>();
    Request *r = owned.get();
    r->id = id;
    r->endpointName = endpoint.name;
    r->startMs = m_clock.elapsed();
    r->lastTelemetryMs = r->startMs;
    const ReplyGuard guard{m_network.post(jsonRequest(endpoint, QStringLiteral("chat/completions")),
                                          QJsonDocument(body).toJson(QJsonDocument::Compact))};
    QNetworkReply *reply = guard.reply.data();
    r->reply = reply;
    m_requests.emplace(id, std::move(owned));
    connect(reply, &QNetworkReply::readyRead, this, [this, id] { onReadyRead(id); });

    co_await reply;
    if (!self || m_closing || !guard.reply)
        co_return;  // the service is going away; nobody listens
    onReadyRead(id);  // whatever arrived with the end of the stream
    flushText(*r);
    // An error body (the stream's body was read as it came); an aborted reply is closed.
    const QByteArray rest = reply->isOpen() ? reply->readAll() : QByteArray();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    GenerationStats stats = statsOf(*r);
    emitTelemetry(*r, true);
    if (r->cancelled) {
        stats.cancelled = true;
        Q_EMIT generationFinished(stats);
    } else if (!r->streamError.isEmpty()) {
        Q_EMIT error(id, r->streamError);
    } else if (reply->error() != QNetworkReply::NoError || status != 200) {
        Q_EMIT error(id, failureMessage(*r, reply, rest));
    } else if (!r->parser.done()) {
        Q_EMIT error(id, tr("The connection to %1 was lost before the reply was complete.").arg(endpoint.name));
    } else {
        Q_EMIT generationFinished(stats);
    }
    m_requests.erase(id);
}

void RemoteInferenceService::onReadyRead(quint64 id)
{
    const auto it = m_requests.find(id);
    if (it == m_requests.end())
        return;
    Request &r = *it->second;
    if (!r.reply || r.cancelled || r.stopReading || !r.reply->isOpen())
        return;
    const int status = r.reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status != 200)
        return;  // an error body: read when the reply finishes
    const QList<SseChunk> chunks = r.parser.feed(r.reply->readAll());
    const qint64 now = m_clock.elapsed();
    for (const SseChunk &chunk : chunks) {
        switch (chunk.kind) {
        case SseChunk::Text:
            if (!chunk.finishReason.isEmpty())
                r.finishReason = chunk.finishReason;
            if (chunk.text.isEmpty())
                break;
            if (!r.firstTokenMs)
                r.firstTokenMs = now;
            r.lastTokenMs = now;
            ++r.pieces;
            if (std::optional<PendingText> batch = r.batcher.push(chunk.text, now))
                Q_EMIT tokensArrived(TokenBatch{id, batch->text, batch->tokenCount});
            break;
        case SseChunk::Usage:
            r.usageTokens = chunk.completionTokens;
            r.promptTokens = std::max(0, chunk.promptTokens);
            break;
        case SseChunk::Done:
            break;
        case SseChunk::Error:
            r.streamError = tr("%1 reported an error during the reply: %2").arg(r.endpointName, chunk.message);
            break;
        case SseChunk::Malformed:
            r.streamError = tr("%1 sent a malformed event, so the reply was stopped: %2").arg(r.endpointName,
                                                                                              chunk.message);
            break;
        }
        if (!r.streamError.isEmpty()) {
            r.stopReading = true;
            QMetaObject::invokeMethod(r.reply.data(), &QNetworkReply::abort, Qt::QueuedConnection);
            break;
        }
    }
    emitTelemetry(r, false);
}

void RemoteInferenceService::flushText(Request &r)
{
    if (r.cancelled)
        return;
    if (std::optional<PendingText> batch = r.batcher.flush(m_clock.elapsed()))
        Q_EMIT tokensArrived(TokenBatch{r.id, batch->text, batch->tokenCount});
}

GenerationStats RemoteInferenceService::statsOf(const Request &r) const
{
    GenerationStats stats;
    stats.requestId = r.id;
    stats.promptTokens = r.promptTokens;
    stats.generatedTokens = r.usageTokens >= 0 ? r.usageTokens : r.pieces;
    // OpenAI's "length": the token limit asked for, or the model's context, whichever came first.
    stats.hitTokenLimit = r.finishReason == QLatin1String("length");
    if (r.firstTokenMs) {
        stats.timeToFirstTokenMs = double(*r.firstTokenMs - r.startMs);
        const qint64 decodeMs = r.lastTokenMs - *r.firstTokenMs;
        if (decodeMs > 0 && stats.generatedTokens > 1)
            stats.decodeTokensPerSecond = (stats.generatedTokens - 1) / seconds(decodeMs);
    }
    return stats;
}

void RemoteInferenceService::emitTelemetry(Request &r, bool force)
{
    const qint64 now = m_clock.elapsed();
    if (!force && now - r.lastTelemetryMs < kTelemetryIntervalMs)
        return;
    r.lastTelemetryMs = now;
    TelemetrySample sample;
    sample.timeSeconds = seconds(now);
    sample.remote = true;
    if (r.firstTokenMs && now > *r.firstTokenMs && r.pieces > 1)
        sample.decodeTokensPerSecond = (r.pieces - 1) / seconds(std::max(r.lastTokenMs, now) - *r.firstTokenMs);
    if (r.firstTokenMs)
        sample.timeToFirstTokenMs = double(*r.firstTokenMs - r.startMs);
    if (force)
        sample.decodeTokensPerSecond = statsOf(r).decodeTokensPerSecond;
    Q_EMIT telemetry(sample);
}

QString RemoteInferenceService::failureMessage(const Request &r, QNetworkReply *reply, const QByteArray &body) const
{
    const QString name = r.endpointName;
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    QString detail = openAiErrorMessage(body);
    if (detail.isEmpty())
        detail = QString::fromUtf8(body.left(200)).simplified();
    if (detail.isEmpty())
        detail = reply->attribute(QNetworkRequest::HttpReasonPhraseAttribute).toString();
    if (status == 401 || status == 403)
        return tr("%1 refused the API key (HTTP %2): %3. Check the key in the endpoint's settings.")
            .arg(name).arg(status).arg(detail);
    if (status == 429)
        return tr("%1 is busy (HTTP 429 Too Many Requests): %2. Try again in a moment.").arg(name, detail);
    if (status >= 500)
        return tr("%1 failed with a server error (HTTP %2): %3").arg(name).arg(status).arg(detail);
    if (status >= 400)
        return tr("%1 rejected the request (HTTP %2): %3").arg(name).arg(status).arg(detail);
    switch (reply->error()) {
    case QNetworkReply::ConnectionRefusedError:
        return tr("Could not connect to %1 (%2): the connection was refused. Is the server running?")
            .arg(name, reply->url().authority());
    case QNetworkReply::HostNotFoundError:
        return tr("Could not find the host of %1 (%2).").arg(name, reply->url().host());
    case QNetworkReply::TimeoutError:
    case QNetworkReply::OperationCanceledError:  // the transfer timeout (a user's cancel is handled before)
        return tr("%1 sent nothing for %2 seconds, so the request was stopped.")
            .arg(name)
            .arg(m_options.timeoutMs / 1000.0);
    case QNetworkReply::SslHandshakeFailedError:
        return tr("Could not verify the secure connection to %1: %2").arg(name, reply->errorString());
    case QNetworkReply::RemoteHostClosedError:
        return tr("The connection to %1 was lost before the reply was complete.").arg(name);
    default:
        return tr("Network error with %1: %2").arg(name, reply->errorString());
    }
}
