#include "qthubtransport.h"

#include <QEventLoop>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTimer>
#include <QUrl>

using exl::hub::HttpRequest;
using exl::hub::HttpResponse;
using exl::hub::HubError;
using exl::hub::HubErrorKind;

namespace {

void readHead(const QNetworkReply &reply, HttpResponse &out)
{
    out.status = reply.attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    out.headers.clear();
    for (const auto &[name, value] : reply.rawHeaderPairs())
        out.headers[name.toLower().toStdString()] = value.toStdString();
}

}  // namespace

HttpResponse QtHubTransport::send(const HttpRequest &rq, const exl::hub::BodySink &sink)
{
    const QUrl url(QString::fromStdString(rq.url), QUrl::StrictMode);
    if (!url.isValid() || url.scheme().isEmpty())
        throw HubError(HubErrorKind::network, "not an absolute URL", rq.url);

    QNetworkRequest request(url);
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
    request.setTransferTimeout(m_timeoutMs);
    request.setHeader(QNetworkRequest::UserAgentHeader, QByteArrayLiteral("exl-studio (huggingface_hub-compatible)"));
    // File bodies byte for byte (a Range continues the stored bytes, the sha256 is of them).
    if (sink)
        request.setRawHeader("Accept-Encoding", "identity");
    for (const auto &[name, value] : rq.headers)
        request.setRawHeader(QByteArray::fromStdString(name), QByteArray::fromStdString(value));

    const unsigned aborts = m_aborts.load();
    QNetworkAccessManager manager;
    QEventLoop loop;
    QNetworkReply *reply = rq.method == "HEAD" ? manager.head(request) : manager.get(request);
    HttpResponse out;
    bool stopped = false;
    bool headRead = false;
    QObject::connect(reply, &QNetworkReply::metaDataChanged, &loop, [&] {
        readHead(*reply, out);
        headRead = true;
    });
    const auto drain = [&] {
        if (!headRead) {
            readHead(*reply, out);
            headRead = true;
        }
        const QByteArray data = reply->readAll();
        if (stopped || data.isEmpty())
            return;
        if (sink && (out.status == 200 || out.status == 206)) {
            if (!sink(out, data.constData(), std::size_t(data.size()))) {
                stopped = true;
                reply->abort();
            }
        } else if (out.body.size() < (16u << 20)) {
            out.body.append(data.constData(), std::size_t(data.size()));
        }
    };
    QObject::connect(reply, &QNetworkReply::readyRead, &loop, drain);
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    QTimer abortCheck;
    QObject::connect(&abortCheck, &QTimer::timeout, &loop, [&] {
        if (m_aborts.load() != aborts && !stopped) {
            stopped = true;
            reply->abort();
        }
    });
    abortCheck.start(100);
    if (!reply->isFinished())
        loop.exec();
    abortCheck.stop();
    // Whatever arrived with the end of the answer.
    if (!stopped && reply->bytesAvailable() > 0)
        drain();
    if (!headRead)
        readHead(*reply, out);

    const QNetworkReply::NetworkError error = reply->error();
    const QString errorText = reply->errorString();
    delete reply;
    if (stopped)
        throw HubError(HubErrorKind::cancelled, "transfer stopped", rq.url);
    // Errors below 200 are the connection's or the proxy's (closed, timed out, refused); those from 200
    // on are the answer's HTTP status, which the client reads from `status`.
    if (out.status == 0 || (error != QNetworkReply::NoError && int(error) < 200))
        throw HubError(HubErrorKind::network,
                       (out.status != 0 ? "the connection was closed before the end of the answer ("
                                        : "cannot connect (") + errorText.toStdString() + ")",
                       rq.url);
    return out;
}
