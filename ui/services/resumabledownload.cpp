#include "services/resumabledownload.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRegularExpression>
#include <QTimer>

namespace {
constexpr int kStallTimeoutMs = 30000;   // a connection that sends nothing this long has failed
constexpr int kRetryDelayMs = 250;
constexpr int kProgressEveryMs = 100;
}  // namespace

ResumableDownload::ResumableDownload(QNetworkAccessManager *network, QObject *parent)
    : QObject(parent), m_network(network)
{
    m_progressTimer.setSingleShot(true);
    m_progressTimer.setInterval(kProgressEveryMs);
    connect(&m_progressTimer, &QTimer::timeout, this, [this] {
        if (m_progressPending) {
            m_progressPending = false;
            Q_EMIT progress();
            m_progressTimer.start();
        }
    });
}

ResumableDownload::~ResumableDownload()
{
    if (m_reply) {
        m_reply->disconnect(this);
        m_reply->abort();
        m_reply->deleteLater();
    }
}

QString ResumableDownload::describeFailure(QNetworkReply *reply)
{
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QUrl url = reply->url();
    const QString host = url.host().isEmpty() ? url.toString() : url.host();
    if (status >= 400) {
        const QString reason = reply->attribute(QNetworkRequest::HttpReasonPhraseAttribute).toString();
        return tr("%1 answered HTTP %2%3 for %4.")
            .arg(host)
            .arg(status)
            .arg(reason.isEmpty() ? QString() : QLatin1Char(' ') + reason)
            .arg(url.toString(QUrl::RemoveQuery | QUrl::RemoveUserInfo));
    }
    if (reply->error() == QNetworkReply::NoError)
        return {};
    return tr("Cannot reach %1: %2. Check the network connection and try again.").arg(host, reply->errorString());
}

void ResumableDownload::start(const QUrl &url, const QString &partPath, qint64 expectedSize)
{
    m_url = url;
    m_expected = expectedSize;
    m_total = expectedSize;
    m_requests = m_rangeRequests = m_failures = 0;
    m_cancelled = false;
    m_error.clear();
    m_writeError.clear();
    m_speed = 0.0;
    m_file.close();
    m_file.setFileName(partPath);
    if (!m_file.open(QIODevice::ReadWrite)) {
        m_running = true;
        finish(false, tr("Cannot write %1: %2.").arg(partPath, m_file.errorString()));
        return;
    }
    m_done = m_file.size();
    if (m_expected > 0 && m_done > m_expected) {  // not the file listed: start again
        m_file.resize(0);
        m_done = 0;
    }
    m_file.seek(m_done);
    m_running = true;
    if (m_expected > 0 && m_done == m_expected) {
        QTimer::singleShot(0, this, [this] { finish(true); });
        return;
    }
    sendRequest();
}

void ResumableDownload::abort()
{
    if (!m_running)
        return;
    m_cancelled = true;
    if (m_reply) {
        QNetworkReply *reply = m_reply;
        m_reply = nullptr;
        reply->disconnect(this);
        reply->abort();
        reply->deleteLater();
    }
    finish(false, tr("Cancelled."));
}

void ResumableDownload::sendRequest()
{
    if (!m_running || m_cancelled)
        return;
    QNetworkRequest request(m_url);
    request.setTransferTimeout(kStallTimeoutMs);
    request.setHeader(QNetworkRequest::UserAgentHeader, QByteArrayLiteral("EXL Studio"));
    if (m_done > 0) {
        request.setRawHeader("Range", "bytes=" + QByteArray::number(m_done) + '-');
        ++m_rangeRequests;
    }
    ++m_requests;
    m_attemptBytes = 0;
    m_accepting = false;
    m_restartRequested = false;
    m_window.start();
    m_windowBytes = 0;
    m_reply = m_network->get(request);
    connect(m_reply, &QNetworkReply::metaDataChanged, this, &ResumableDownload::onMetaData);
    connect(m_reply, &QNetworkReply::readyRead, this, &ResumableDownload::onReadyRead);
    connect(m_reply, &QNetworkReply::finished, this, &ResumableDownload::onFinished);
}

void ResumableDownload::onMetaData()
{
    const int status = m_reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    m_accepting = false;
    if (status == 206) {
        // "bytes START-END/TOTAL": the body must continue exactly where the .part ends.
        static const QRegularExpression range(QStringLiteral("bytes\\s+(\\d+)-(\\d+)/(\\d+|\\*)"));
        const auto m = range.match(QString::fromLatin1(m_reply->rawHeader("Content-Range")));
        if (!m.hasMatch() || m.captured(1).toLongLong() != m_done) {
            m_restartRequested = true;
            m_reply->abort();
            return;
        }
        if (m.captured(3) != QLatin1String("*"))
            m_total = m.captured(3).toLongLong();
        m_accepting = true;
    } else if (status == 200) {
        if (m_done > 0) {  // the server sent the whole file: the .part starts again
            m_file.resize(0);
            m_file.seek(0);
            m_done = 0;
        }
        const qint64 length = m_reply->header(QNetworkRequest::ContentLengthHeader).toLongLong();
        if (length > 0)
            m_total = length;
        m_accepting = true;
    }
}

void ResumableDownload::noteBytes(qint64 n)
{
    m_done += n;
    m_attemptBytes += n;
    m_windowBytes += n;
    const qint64 ms = m_window.elapsed();
    if (ms >= 500) {  // the speed: a moving average over half-second windows
        const double rate = m_windowBytes * 1000.0 / double(ms);
        m_speed = m_speed <= 0.0 ? rate : 0.7 * m_speed + 0.3 * rate;
        m_window.restart();
        m_windowBytes = 0;
    }
    // At most every kProgressEveryMs, and once more after the last bytes of a burst.
    if (!m_progressTimer.isActive()) {
        Q_EMIT progress();
        m_progressTimer.start();
    } else {
        m_progressPending = true;
    }
}

void ResumableDownload::onReadyRead()
{
    if (!m_reply || !m_accepting || !m_writeError.isEmpty())
        return;
    const QByteArray data = m_reply->readAll();
    if (data.isEmpty())
        return;
    if (m_file.write(data) != data.size()) {
        m_writeError = tr("Cannot write %1: %2 (is the disk full?).").arg(m_file.fileName(), m_file.errorString());
        m_reply->abort();
        return;
    }
    noteBytes(data.size());
}

void ResumableDownload::restartFromZero()
{
    m_file.resize(0);
    m_file.seek(0);
    m_done = 0;
    QTimer::singleShot(0, this, &ResumableDownload::sendRequest);
}

void ResumableDownload::onFinished()
{
    QNetworkReply *reply = m_reply;
    if (!reply)
        return;
    m_reply = nullptr;
    reply->deleteLater();
    onReadyRead();  // what is left in the buffer
    m_file.flush();
    if (!m_writeError.isEmpty()) {
        finish(false, m_writeError);
        return;
    }
    if (m_restartRequested) {  // a range the server got wrong: once more from the start
        if (++m_failures >= kMaxAttempts) {
            finish(false, tr("%1 sent the wrong part of the file.").arg(m_url.host()));
            return;
        }
        restartFromZero();
        return;
    }
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status == 416) {  // the range lies past the end: complete already, or not this file
        if (m_expected > 0 && m_done == m_expected) {
            finish(true);
        } else if (m_done > 0 && ++m_failures < kMaxAttempts) {
            restartFromZero();
        } else {
            finish(false, describeFailure(reply));
        }
        return;
    }
    const bool complete = m_expected <= 0 ? reply->error() == QNetworkReply::NoError : m_done >= m_expected;
    if (reply->error() != QNetworkReply::NoError || status >= 400 || !complete) {
        // A connection lost after some bytes: continue from there (a bounded number of times).
        if (m_attemptBytes > 0 && status < 400 && ++m_failures < kMaxAttempts) {
            QTimer::singleShot(kRetryDelayMs, this, &ResumableDownload::sendRequest);
            return;
        }
        QString why = describeFailure(reply);
        if (why.isEmpty())
            why = tr("The download of %1 ended after %2 of its %3 bytes.").arg(m_url.fileName()).arg(m_done).arg(m_expected);
        finish(false, why);
        return;
    }
    if (m_expected > 0 && m_done != m_expected) {
        m_file.resize(0);  // not the file listed: the next start fetches it anew
        finish(false, tr("%1 sent %2 bytes for %3, which should have %4.")
                          .arg(m_url.host())
                          .arg(m_done)
                          .arg(m_url.fileName())
                          .arg(m_expected));
        return;
    }
    finish(true);
}

void ResumableDownload::finish(bool ok, const QString &error)
{
    if (!m_running)
        return;
    m_running = false;
    m_error = error;
    m_file.close();
    m_progressTimer.stop();
    m_progressPending = false;
    Q_EMIT progress();
    Q_EMIT finished(ok);
}
