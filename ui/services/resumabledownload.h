// One file fetched over HTTP(S) into a `.part` file, resumable: bytes an earlier attempt left
// there are continued with a Range request (a server that ignores it sends the whole file, and
// the .part starts again), and a connection lost after some bytes arrived is retried from where
// it stopped, a few times. Progress: bytes done and total, and a smoothed speed. A cancelled or
// failed download keeps its .part for the next start.
#pragma once
#include <QElapsedTimer>
#include <QFile>
#include <QObject>
#include <QPointer>
#include <QTimer>
#include <QUrl>

class QNetworkAccessManager;
class QNetworkReply;

class ResumableDownload : public QObject
{
    Q_OBJECT
public:
    explicit ResumableDownload(QNetworkAccessManager *network, QObject *parent = nullptr);
    ~ResumableDownload() override;

    // Fetches `url` into `partPath`, expecting `expectedSize` bytes (0: unknown); finished()
    // follows, also when the .part already holds them all.
    void start(const QUrl &url, const QString &partPath, qint64 expectedSize);
    // Stops at once: finished(false) with cancelled() true; the .part is kept.
    void abort();

    qint64 bytesDone() const { return m_done; }
    qint64 bytesTotal() const { return m_total; }
    double bytesPerSecond() const { return m_speed; }
    // Requests made (retries and resumes included) and how many asked for a range.
    int requests() const { return m_requests; }
    int rangeRequests() const { return m_rangeRequests; }
    bool cancelled() const { return m_cancelled; }
    QString error() const { return m_error; }

    // What went wrong with a finished reply, for a person: "cannot reach the host" for network
    // faults, the HTTP status for a server's refusal; empty when nothing did.
    static QString describeFailure(QNetworkReply *reply);

    static constexpr int kMaxAttempts = 5;

Q_SIGNALS:
    void progress();
    void finished(bool ok);

private:
    void sendRequest();
    void onMetaData();
    void onReadyRead();
    void onFinished();
    void finish(bool ok, const QString &error = {});
    void restartFromZero();
    void noteBytes(qint64 n);

    QNetworkAccessManager *m_network;
    QPointer<QNetworkReply> m_reply;
    QUrl m_url;
    QFile m_file;
    qint64 m_done = 0, m_total = 0, m_expected = 0;
    qint64 m_attemptBytes = 0;  // received by the current request
    int m_requests = 0, m_rangeRequests = 0, m_failures = 0;
    bool m_accepting = false;   // the current reply's body is the file's next bytes
    bool m_restartRequested = false;
    bool m_cancelled = false, m_running = false;
    QString m_error, m_writeError;
    double m_speed = 0.0;
    qint64 m_windowBytes = 0;
    QElapsedTimer m_window;
    QTimer m_progressTimer;  // spaces the progress signals
    bool m_progressPending = false;
};
