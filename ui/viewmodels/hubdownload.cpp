#include "hubdownload.h"

#include <QDir>

#include "hubviewmodel.h"
#include "services/qthubtransport.h"

namespace {
const QString kRepo = QStringLiteral("repo");
const QString kRevision = QStringLiteral("revision");
const QString kFolder = QStringLiteral("folder");
}  // namespace

HubDownload::HubDownload(std::function<exl::hub::HubConfig()> config, std::shared_ptr<QtHubTransport> transport,
                         QObject *parent)
    : QObject(parent), m_config(std::move(config)), m_transport(std::move(transport))
{
}

HubDownload::~HubDownload()
{
    if (m_thread.joinable()) {
        m_thread.request_stop();
        m_transport->abortAll();
        m_thread.join();
    }
}

QString HubDownload::name() const
{
    if (m_pending.isEmpty())
        return {};
    const QString folder = m_pending.value(kFolder).toString();
    return m_pending.value(kRepo).toString() + u':' + m_pending.value(kRevision).toString()
           + (folder.isEmpty() ? QString() : u'/' + folder);
}

bool HubDownload::start(const QString &repo, const QString &revision, const QString &folder)
{
    if (m_running)
        return false;
    if (m_thread.joinable())
        m_thread.join();  // the last one has reported and ended
    m_pending = QVariantMap{{kRepo, repo}, {kRevision, revision}, {kFolder, folder}};
    m_running = true;
    m_error.clear();
    m_progress = {};
    Q_EMIT pendingChanged(m_pending);
    Q_EMIT stateChanged();
    Q_EMIT progressChanged();

    exl::hub::DownloadRequest request;
    request.repo = repo.toStdString();
    request.revision = revision.toStdString();
    if (!folder.isEmpty())
        request.include = {folder.toStdString() + "/*"};
    exl::hub::HubClient client(m_config(), m_transport);
    m_thread = std::jthread([this, client = std::move(client), request, repo, folder](std::stop_token stop) {
        QString path, error;
        bool cancelled = false;
        try {
            const auto progress = [this](const exl::hub::DownloadProgress &p) {
                QMetaObject::invokeMethod(this, [this, p] { onProgress(p); }, Qt::QueuedConnection);
            };
            const exl::hub::DownloadResult result = client.download(request, progress, stop);
            path = QDir(QString::fromStdString(result.snapshot.string())).filePath(folder.isEmpty() ? QStringLiteral(".") : folder);
            path = QDir::cleanPath(path);
        } catch (const exl::hub::HubError &e) {
            cancelled = e.hub_kind() == exl::hub::HubErrorKind::cancelled || stop.stop_requested();
            error = HubViewModel::errorMessage(e, repo, client.config());
        } catch (const std::exception &e) {
            error = QString::fromStdString(e.what());
        }
        QMetaObject::invokeMethod(this, [this, path, error, cancelled] { onDone(path, error, cancelled); },
                                  Qt::QueuedConnection);
    });
    return true;
}

void HubDownload::onProgress(const exl::hub::DownloadProgress &progress)
{
    if (!m_running)
        return;
    m_progress = progress;
    Q_EMIT progressChanged();
}

void HubDownload::onDone(const QString &modelPath, const QString &error, bool cancelled)
{
    m_running = false;
    if (cancelled) {
        // Stopped by the user: nothing to resume at the next start (the bytes stay for a new start).
        m_pending.clear();
        m_error.clear();
    } else if (!error.isEmpty()) {
        m_error = error;  // kept pending: Resume tries again
    } else {
        m_pending.clear();
        m_finishedPath = modelPath;
        m_progress.finished = true;
    }
    Q_EMIT pendingChanged(m_pending);
    Q_EMIT stateChanged();
    Q_EMIT progressChanged();
    if (!modelPath.isEmpty() && error.isEmpty())
        Q_EMIT finished(modelPath);
}

void HubDownload::cancel()
{
    if (m_running && m_thread.joinable()) {
        m_thread.request_stop();
        m_transport->abortAll();  // also a request waiting for a stalled server
    }
}

void HubDownload::setPending(const QVariantMap &pending)
{
    if (m_running || pending == m_pending)
        return;
    m_pending = pending.value(kRepo).toString().isEmpty() ? QVariantMap() : pending;
    Q_EMIT stateChanged();
}

bool HubDownload::resume()
{
    if (m_running || m_pending.isEmpty())
        return false;
    const QVariantMap p = m_pending;
    return start(p.value(kRepo).toString(), p.value(kRevision).toString(), p.value(kFolder).toString());
}

void HubDownload::discard()
{
    if (m_running)
        return;
    m_pending.clear();
    m_error.clear();
    Q_EMIT pendingChanged(m_pending);
    Q_EMIT stateChanged();
}
