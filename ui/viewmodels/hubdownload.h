// One model download from the Hugging Face Hub, as the Hub tab shows it: the engine's
// HubClient::download (several files at once, HTTP Range resumption, sha256 checks, the free-disk
// check, the huggingface_hub cache layout) on a thread of its own, its progress (bytes, speed, time
// left) as properties on the GUI thread, cancel, and an error that says what to do.
//
// A download under way is remembered (pendingChanged: the settings keep it), so when the app was
// closed before it finished the next start offers to resume it; the bytes already fetched are kept
// in the cache's .incomplete files and continued with Range requests. Cancel keeps them too: the
// same download started again continues where it stopped.
#pragma once
#include <QObject>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>
#include <functional>
#include <memory>
#include <thread>

#include "exl/hub.h"

class QtHubTransport;

class HubDownload : public QObject
{
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("Created by the application")
    Q_PROPERTY(bool running READ running NOTIFY stateChanged)
    Q_PROPERTY(QString name READ name NOTIFY stateChanged)  // ORG/NAME:BRANCH[/FOLDER]
    Q_PROPERTY(QString error READ error NOTIFY stateChanged)
    Q_PROPERTY(QString finishedPath READ finishedPath NOTIFY stateChanged)  // the last finished download's model folder
    Q_PROPERTY(bool interrupted READ interrupted NOTIFY stateChanged)  // a download of an earlier run to resume
    Q_PROPERTY(double bytesDone READ bytesDone NOTIFY progressChanged)
    Q_PROPERTY(double bytesTotal READ bytesTotal NOTIFY progressChanged)
    Q_PROPERTY(double bytesPerSecond READ bytesPerSecond NOTIFY progressChanged)
    Q_PROPERTY(double secondsLeft READ secondsLeft NOTIFY progressChanged)  // -1: unknown
    Q_PROPERTY(int filesDone READ filesDone NOTIFY progressChanged)
    Q_PROPERTY(int filesTotal READ filesTotal NOTIFY progressChanged)
public:
    // `transport`: this download's own (Cancel stops its requests under way at once).
    HubDownload(std::function<exl::hub::HubConfig()> config, std::shared_ptr<QtHubTransport> transport,
                QObject *parent = nullptr);
    ~HubDownload() override;  // stops a download under way and waits for it (its bytes stay for a resume)

    bool running() const { return m_running; }
    QString name() const;
    QString error() const { return m_error; }
    QString finishedPath() const { return m_finishedPath; }
    bool interrupted() const { return !m_running && !m_pending.isEmpty(); }
    double bytesDone() const { return double(m_progress.bytes_done); }
    double bytesTotal() const { return double(m_progress.bytes_total); }
    double bytesPerSecond() const { return m_progress.bytes_per_second; }
    double secondsLeft() const { return m_progress.seconds_left; }
    int filesDone() const { return m_progress.files_done; }
    int filesTotal() const { return m_progress.files_total; }

    // Starts downloading `folder` ("" = every file) of `revision`; false when one is under way.
    bool start(const QString &repo, const QString &revision, const QString &folder);
    Q_INVOKABLE void cancel();
    // The download an earlier run did not finish ({repo, revision, folder}), from the settings.
    void setPending(const QVariantMap &pending);
    QVariantMap pending() const { return m_pending; }
    Q_INVOKABLE bool resume();
    Q_INVOKABLE void discard();  // forgets the interrupted download (its partial files stay in the cache)

Q_SIGNALS:
    void stateChanged();
    void progressChanged();
    // The download to remember (empty: none), for the settings.
    void pendingChanged(const QVariantMap &pending);
    // A download finished: the model folder in the cache.
    void finished(const QString &modelPath);

private:
    void onProgress(const exl::hub::DownloadProgress &progress);
    void onDone(const QString &modelPath, const QString &error, bool cancelled);

    std::function<exl::hub::HubConfig()> m_config;
    std::shared_ptr<QtHubTransport> m_transport;
    std::jthread m_thread;
    bool m_running = false;
    QVariantMap m_pending;
    QString m_error;
    QString m_finishedPath;
    exl::hub::DownloadProgress m_progress;
};
