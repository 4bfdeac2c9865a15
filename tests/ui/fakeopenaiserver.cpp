#include "fakeopenaiserver.h"

#include <QJsonArray>
#include <QJsonDocument>

FakeOpenAiServer::FakeOpenAiServer(FakeTiming timing, QObject *parent)
    : QObject(parent)
    , m_timing(timing)
{
    connect(&m_server, &QTcpServer::newConnection, this, [this] {
        while (QTcpSocket *socket = m_server.nextPendingConnection()) {
            connect(socket, &QTcpSocket::readyRead, this, [this, socket] { onReadable(socket); });
            connect(socket, &QTcpSocket::disconnected, this, [this, socket] {
                for (Stream *s : std::as_const(m_streams)) {
                    if (s->socket == socket && !s->finished) {
                        s->finished = true;
                        s->timer->stop();
                        ++m_disconnectsMidStream;
                        Q_EMIT clientGoneMidStream();
                    }
                }
                m_buffers.remove(socket);
                socket->deleteLater();
            });
        }
    });
}

FakeOpenAiServer::~FakeOpenAiServer()
{
    // The sockets (children of m_server) go after this body: they must not reach the streams.
    for (QTcpSocket *socket : m_server.findChildren<QTcpSocket *>())
        socket->disconnect(this);
    qDeleteAll(m_streams);
}

bool FakeOpenAiServer::listen()
{
    return m_server.listen(QHostAddress::LocalHost, 0);
}

QString FakeOpenAiServer::baseUrl() const
{
    return QStringLiteral("http://127.0.0.1:%1/v1").arg(m_server.serverPort());
}

QStringList FakeOpenAiServer::scriptedPieces() const
{
    FakeTiming instant = m_timing;
    instant.prefillTokensPerSecond = 0;
    instant.decodeTokensPerSecond = 0;
    instant.loadStepMs = 0;
    FakeGenerationBackend backend(QStringLiteral("cpu"), instant);
    backend.load(backend.availableModels().constFirst().path, {}, [](double) {});
    backend.prefill({{QStringLiteral("user"), QStringLiteral("hi")}}, {});
    QStringList pieces;
    while (std::optional<DecodedPiece> piece = backend.decodeStep())
        pieces.append(piece->text);
    return pieces;
}

QString FakeOpenAiServer::scriptedReply() const
{
    return scriptedPieces().join(QString());
}

void FakeOpenAiServer::onReadable(QTcpSocket *socket)
{
    QByteArray &buffer = m_buffers[socket];
    buffer += socket->readAll();
    const int headerEnd = buffer.indexOf("\r\n\r\n");
    if (headerEnd < 0)
        return;
    const QList<QByteArray> lines = buffer.left(headerEnd).split('\n');
    const QList<QByteArray> requestLine = lines.value(0).trimmed().split(' ');
    QHash<QByteArray, QByteArray> headers;
    for (int i = 1; i < lines.size(); ++i) {
        const int colon = lines[i].indexOf(':');
        if (colon > 0)
            headers.insert(lines[i].left(colon).trimmed().toLower(), lines[i].mid(colon + 1).trimmed());
    }
    const int length = headers.value("content-length", "0").toInt();
    if (buffer.size() < headerEnd + 4 + length)
        return;
    const QByteArray body = buffer.mid(headerEnd + 4, length);
    buffer.clear();
    handle(socket, requestLine.value(0), requestLine.value(1), headers, body);
}

void FakeOpenAiServer::handle(QTcpSocket *socket, const QByteArray &method, const QByteArray &path,
                              const QHash<QByteArray, QByteArray> &headers, const QByteArray &body)
{
    if (!m_apiKey.isEmpty() && headers.value("authorization") != "Bearer " + m_apiKey.toUtf8())
        return respond(socket, 401, R"({"error":{"message":"missing or invalid API key","type":"invalid_request_error","code":"invalid_api_key"}})");
    if (method == "GET" && path == "/v1/models") {
        QJsonArray data;
        for (const ModelInfo &m : FakeGenerationBackend().availableModels())
            data.append(QJsonObject{{QStringLiteral("id"), m.path}, {QStringLiteral("object"), QStringLiteral("model")}});
        return respond(socket, 200, QJsonDocument(QJsonObject{{QStringLiteral("object"), QStringLiteral("list")},
                                                              {QStringLiteral("data"), data}}).toJson());
    }
    if (method != "POST" || path != "/v1/chat/completions")
        return respond(socket, 404, R"({"error":{"message":"no such route"}})");
    ++m_chatRequests;
    m_lastRequest = QJsonDocument::fromJson(body).object();
    if (m_fault == Fault::TooManyRequests)
        return respond(socket, 429, R"({"error":{"message":"the generation queue is full; retry later","type":"rate_limit_error"}})");
    if (m_fault == Fault::ServerError)
        return respond(socket, 500, R"({"error":{"message":"generation failed: out of memory","type":"server_error"}})");
    startStream(socket);
}

void FakeOpenAiServer::respond(QTcpSocket *socket, int status, const QByteArray &json)
{
    const QByteArray reason = status == 200 ? "OK" : status == 401 ? "Unauthorized" : status == 429 ? "Too Many Requests"
                            : status == 404 ? "Not Found" : "Internal Server Error";
    socket->write("HTTP/1.1 " + QByteArray::number(status) + ' ' + reason + "\r\nContent-Type: application/json\r\n"
                  "Content-Length: " + QByteArray::number(json.size()) + "\r\n\r\n" + json);
}

void FakeOpenAiServer::startStream(QTcpSocket *socket)
{
    socket->write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                  "Transfer-Encoding: chunked\r\n\r\n");
    auto *stream = new Stream;
    stream->socket = socket;
    stream->pieces = scriptedPieces();
    stream->timer = new QTimer(this);
    const double rate = m_timing.decodeTokensPerSecond;
    stream->timer->setInterval(rate > 0 ? int(1000.0 / rate) : 0);
    connect(stream->timer, &QTimer::timeout, this, [this, stream] { step(stream); });
    m_streams.append(stream);
    writeChunk(socket, R"(data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]})"
                       "\n\n");
    stream->timer->start();
}

void FakeOpenAiServer::step(Stream *stream)
{
    QTcpSocket *socket = stream->socket;
    if (!socket || stream->finished) {
        stream->timer->stop();
        return;
    }
    if (m_fault != Fault::None && stream->next == kChunksBeforeFault) {
        stream->timer->stop();  // Stall: nothing more, the connection stays open
        if (m_fault == Fault::DropMidStream) {
            stream->finished = true;
            socket->abort();
        } else if (m_fault == Fault::MalformedEvent) {
            stream->finished = true;
            writeChunk(socket, "data: {\"choices\": [{\"delta\": {\"content\": \"oops\"\n\n");
        }
        return;
    }
    if (stream->next < stream->pieces.size()) {
        const QJsonObject delta{{QStringLiteral("content"), stream->pieces[stream->next++]}};
        const QJsonObject chunk{{QStringLiteral("object"), QStringLiteral("chat.completion.chunk")},
                                {QStringLiteral("choices"),
                                 QJsonArray{QJsonObject{{QStringLiteral("index"), 0}, {QStringLiteral("delta"), delta}}}}};
        writeChunk(socket, "data: " + QJsonDocument(chunk).toJson(QJsonDocument::Compact) + "\n\n");
        return;
    }
    stream->timer->stop();
    stream->finished = true;
    writeChunk(socket, R"(data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})"
                       "\n\n");
    writeChunk(socket, "data: {\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,"
                       "\"completion_tokens\":" + QByteArray::number(int(stream->pieces.size())) + "}}\n\ndata: [DONE]\n\n");
    socket->write("0\r\n\r\n");
}

void FakeOpenAiServer::writeChunk(QTcpSocket *socket, const QByteArray &data)
{
    socket->write(QByteArray::number(data.size(), 16) + "\r\n" + data + "\r\n");
}
