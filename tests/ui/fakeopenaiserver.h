// A small OpenAI-compatible server on loopback for the UI tests, on the test's own thread:
// GET /v1/models and POST /v1/chat/completions streaming the FakeGenerationBackend's scripted
// reply, paced like FakeTiming; or misbehaving on purpose (see Fault).
#pragma once
#include <QHash>
#include <QJsonObject>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

#include "services/fakegenerationbackend.h"

class FakeOpenAiServer : public QObject
{
    Q_OBJECT
public:
    enum class Fault {
        None,
        DropMidStream,   // a few chunks, then the connection is cut
        MalformedEvent,  // a few chunks, then an event that is not JSON
        TooManyRequests, // HTTP 429 with an OpenAI error body
        ServerError,     // HTTP 500 with an OpenAI error body
        Stall,           // a few chunks, then silence with the connection open
    };

    explicit FakeOpenAiServer(FakeTiming timing = {0, 0, 1, 0, 1}, QObject *parent = nullptr);
    ~FakeOpenAiServer() override;

    bool listen();  // on 127.0.0.1, any free port
    QString baseUrl() const;
    void setFault(Fault fault) { m_fault = fault; }
    void setApiKey(const QString &key) { m_apiKey = key; }
    // Chunks sent before a fault strikes.
    static constexpr int kChunksBeforeFault = 3;

    int chatRequests() const { return m_chatRequests; }
    int disconnectsMidStream() const { return m_disconnectsMidStream; }
    QJsonObject lastRequest() const { return m_lastRequest; }
    // The full scripted reply (what a complete stream carries).
    QString scriptedReply() const;

Q_SIGNALS:
    void clientGoneMidStream();

private:
    struct Stream {
        QPointer<QTcpSocket> socket;
        QStringList pieces;
        int next = 0;
        QTimer *timer = nullptr;
        bool finished = false;
    };

    void onReadable(QTcpSocket *socket);
    void handle(QTcpSocket *socket, const QByteArray &method, const QByteArray &path,
                const QHash<QByteArray, QByteArray> &headers, const QByteArray &body);
    void respond(QTcpSocket *socket, int status, const QByteArray &json);
    void startStream(QTcpSocket *socket);
    void step(Stream *stream);
    void writeChunk(QTcpSocket *socket, const QByteArray &data);
    QStringList scriptedPieces() const;

    QTcpServer m_server;
    FakeTiming m_timing;
    Fault m_fault = Fault::None;
    QString m_apiKey;
    QHash<QTcpSocket *, QByteArray> m_buffers;
    QList<Stream *> m_streams;
    int m_chatRequests = 0;
    int m_disconnectsMidStream = 0;
    QJsonObject m_lastRequest;
};
