// The Models page's Hugging Face tab against tests/hub/hub_server.py (the Hub's protocol, proved
// against huggingface_hub), over the app's Qt Network transport: search (filter, order), a
// repository's variants with the planner's fit read from the headers over the Hub (equal to the fit
// of the same model on disk), download with progress, cancel and resume with HTTP Range, an
// interrupted download offered again by the next start, a gated repository's message (a token in
// Settings) and the download with the token, and the downloaded model listed, selected and loaded by
// the real app on the CPU. Fixtures: $EXL_FIXTURES (default <source>/../shared/fixtures); missing
// fixtures or Python skip the test unless EXL_REQUIRE_FIXTURES=1.
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <qcoro/qcorotask.h>

#include "app/appcontext.h"
#include "hubtestserver.h"
#include "services/enginevramplanner.h"
#include "services/fakeinferenceservice.h"
#include "services/modelscanner.h"
#include "services/qthubtransport.h"
#include "viewmodels/hubdownload.h"
#include "viewmodels/hubviewmodel.h"
#include "viewmodels/modelmanager.h"
#include "viewmodels/settingsviewmodel.h"

namespace {

const QString kOrg = QStringLiteral("exl-test/");
const QString kToken = QStringLiteral("hf_test_token_for_gated_repo");  // hub_server.py's default --token

QString fixturesDir()
{
    const QString env = qEnvironmentVariable("EXL_FIXTURES");
    return env.isEmpty() ? QStringLiteral(EXL_DEFAULT_FIXTURES) : env;
}
QString fixtureModel(const QString &name) { return fixturesDir() + QStringLiteral("/models/exl2/") + name; }

QStringList ids(const QVariantList &rows)
{
    QStringList out;
    for (const QVariant &r : rows)
        out.append(r.toMap().value(QStringLiteral("id")).toString());
    return out;
}

QByteArray sha256Of(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    QCryptographicHash h(QCryptographicHash::Sha256);
    h.addData(&f);
    return h.result().toHex();
}

// Every file of the fixture folder is in `dir` with the same bytes.
bool sameFiles(const QString &fixture, const QString &dir, QString *why)
{
    for (const QString &name : QDir(fixture).entryList(QDir::Files)) {
        if (sha256Of(QDir(fixture).filePath(name)) != sha256Of(QDir(dir).filePath(name))) {
            *why = QStringLiteral("%1 differs or is missing in %2").arg(name, dir);
            return false;
        }
    }
    return true;
}

double fixtureBits(const QString &name)
{
    QFile f(fixtureModel(name) + QStringLiteral("/config.json"));
    f.open(QIODevice::ReadOnly);
    return QJsonDocument::fromJson(f.readAll()).object().value(QLatin1String("quantization_config")).toObject()
        .value(QLatin1String("bits")).toDouble();
}

}  // namespace

class HubTest : public QObject
{
    Q_OBJECT

    QTemporaryDir m_home;  // HF_HOME: the hub cache under it
    HubTestServer m_server;
    QString m_token;       // what Settings would hold
    std::shared_ptr<QtHubTransport> m_transport = std::make_shared<QtHubTransport>(15000);
    FakeInferenceService m_service{QStringLiteral("cpu")};
    std::unique_ptr<ModelManager> m_models;

    exl::hub::HubConfig config() const
    {
        exl::hub::HubConfig c = exl::hub::HubConfig::from_environment();
        if (!m_token.isEmpty())
            c.token = m_token.toStdString();
        return c;
    }
    std::unique_ptr<HubDownload> makeDownload()
    {
        return std::make_unique<HubDownload>([this] { return config(); }, std::make_shared<QtHubTransport>(15000));
    }
    std::unique_ptr<HubViewModel> makeHub(HubDownload *download)
    {
        return std::make_unique<HubViewModel>(
            [this] { return config(); }, m_transport,
            [this](const ModelInfo &m, int context, CacheKind cache) { return m_models->fitFor(m, context, cache); },
            download);
    }
    QString blobs(const QString &repo) const
    {
        return m_home.filePath(QStringLiteral("hub/models--exl-test--%1/blobs").arg(repo));
    }
    // The CDN requests of the server's log for an LFS object: their Range headers ("" for none).
    QStringList rangesFor(const QByteArray &sha)
    {
        QStringList out;
        for (const QJsonValue &e : QJsonDocument::fromJson(m_server.get(QStringLiteral("/_test/log"))).array()) {
            const QJsonObject o = e.toObject();
            if (o.value(QLatin1String("host")).toString() == QLatin1String("cdn")
                && o.value(QLatin1String("path")).toString().contains(QString::fromLatin1(sha)))
                out.append(o.value(QLatin1String("range")).toString());
        }
        return out;
    }

private Q_SLOTS:
    void initTestCase()
    {
        if (!QFile::exists(fixtureModel(QStringLiteral("ref-s-4.0bpw/config.json"))) || QStringLiteral(EXL_PYTHON).isEmpty()) {
            if (qEnvironmentVariable("EXL_REQUIRE_FIXTURES") == QLatin1String("1"))
                QFAIL("fixture models or Python missing and EXL_REQUIRE_FIXTURES=1");
            QSKIP("fixture models or Python not found (set EXL_FIXTURES)");
        }
        QVERIFY(m_home.isValid());
        qputenv("HF_HOME", m_home.path().toUtf8());
        for (const char *name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HUB_CACHE",
                                 "HUGGINGFACE_HUB_CACHE", "HF_HUB_OFFLINE"})
            qunsetenv(name);
        QString error;
        QVERIFY2(m_server.start(QStringLiteral(EXL_PYTHON), QStringLiteral(EXL_HUB_SERVER), fixturesDir(), &error),
                 qPrintable(error));
        qputenv("HF_ENDPOINT", m_server.endpoint().toUtf8());
        m_models = std::make_unique<ModelManager>(&m_service, EngineVramPlanner::forDevice(QStringLiteral("cpu")));
    }

    void searchFiltersAndSorts()
    {
        auto download = makeDownload();
        auto hub = makeHub(download.get());
        QCOMPARE(hub->formatFilter(), 2);  // EXL3 first
        hub->search();
        QVERIFY(hub->searching());
        QTRY_VERIFY_WITH_TIMEOUT(hub->searched() && !hub->searching(), 15000);
        QCOMPARE(hub->searchError(), QString());
        QCOMPARE(ids(hub->results()), QStringList({kOrg + "ref-s-exl3"}));
        QCOMPARE(hub->results().first().toMap().value("format").toString(), QStringLiteral("EXL3"));
        // EXL2, by downloads (the server's EXL2 repos: 1500, 300, 40).
        hub->setFormatFilter(1);
        hub->search();
        QTRY_VERIFY_WITH_TIMEOUT(!hub->searching(), 15000);
        QCOMPARE(ids(hub->results()), QStringList({kOrg + "ref-s-exl2", kOrg + "ref-xs-gated", kOrg + "ref-subfolders"}));
        const QVariantMap first = hub->results().first().toMap();
        QCOMPARE(first.value("downloads").toDouble(), 1500.0);
        QCOMPARE(first.value("likes").toDouble(), 15.0);
        QCOMPARE(first.value("format").toString(), QStringLiteral("EXL2"));
        QCOMPARE(first.value("updated").toDate(), QDate(2026, 3, 1));
        QVERIFY(!first.value("gated").toBool());
        QVERIFY(hub->results().at(1).toMap().value("gated").toBool());
        // By recency (updated 2026-05-20, 03-01, 01-15).
        hub->setSortOrder(1);
        hub->search();
        QTRY_VERIFY_WITH_TIMEOUT(!hub->searching(), 15000);
        QCOMPARE(ids(hub->results()), QStringList({kOrg + "ref-subfolders", kOrg + "ref-s-exl2", kOrg + "ref-xs-gated"}));
        // Text, and text no repository of the format has.
        hub->setQuery(QStringLiteral("gated"));
        hub->search();
        QTRY_VERIFY_WITH_TIMEOUT(!hub->searching(), 15000);
        QCOMPARE(ids(hub->results()), QStringList({kOrg + "ref-xs-gated"}));
        hub->setFormatFilter(2);
        hub->search();
        QTRY_VERIFY_WITH_TIMEOUT(!hub->searching(), 15000);
        QVERIFY(hub->results().isEmpty());
        QCOMPARE(hub->searchError(), QString());
        // Every format: the EXL2 and EXL3 repositories together.
        hub->setQuery({});
        hub->setFormatFilter(0);
        hub->search();
        QTRY_VERIFY_WITH_TIMEOUT(!hub->searching(), 15000);
        QCOMPARE(ids(hub->results()), QStringList({kOrg + "ref-subfolders", kOrg + "ref-s-exl3", kOrg + "ref-s-exl2",
                                                   kOrg + "ref-xs-gated"}));  // by recency, as set above
    }

    void branchesWithTheirFit()
    {
        auto download = makeDownload();
        auto hub = makeHub(download.get());
        hub->openRepo(kOrg + "ref-s-exl2");
        QVERIFY(hub->repoLoading());
        QTRY_VERIFY_WITH_TIMEOUT(!hub->repoLoading(), 30000);
        QCOMPARE(hub->repoError(), QString());
        const QVariantList variants = hub->variants();
        QCOMPARE(variants.size(), 3);  // main holds no model
        const QStringList names{QStringLiteral("ref-s-3.0bpw"), QStringLiteral("ref-s-4.0bpw"), QStringLiteral("ref-s-6.0bpw")};
        double lastWeights = 0;
        for (int i = 0; i < 3; ++i) {
            const QVariantMap v = variants.at(i).toMap();
            QCOMPARE(v.value("label").toString(), names.at(i).mid(6));
            QCOMPARE(v.value("format").toString(), QStringLiteral("EXL2"));
            QCOMPARE(v.value("bpw").toDouble(), fixtureBits(names.at(i)));
            QVERIFY(!v.value("downloaded").toBool());
            // The branch's files: the fixture folder plus a README and .gitattributes.
            qint64 fixtureBytes = 0;
            for (const QFileInfo &f : QDir(fixtureModel(names.at(i))).entryInfoList(QDir::Files))
                fixtureBytes += f.size();
            const qint64 size = qint64(v.value("sizeBytes").toDouble());
            QVERIFY2(size > fixtureBytes && size < fixtureBytes + 1024, qPrintable(QString::number(size)));
            const QVariantMap fit = v.value("fit").toMap();
            QVERIFY(fit.value("available").toBool());
            QVERIFY(fit.value("weightsGiB").toDouble() > lastWeights);
            lastWeights = fit.value("weightsGiB").toDouble();
        }
        // The fit from the headers read over the Hub is the fit of the same model on disk.
        const auto local = describeModelFolder(fixtureModel(names.at(1)));
        QVERIFY(local);
        const QVariantMap onDisk = m_models->fitFor(*local, hub->contextLength(), CacheKind(hub->cacheType()));
        const QVariantMap overHub = variants.at(1).toMap().value("fit").toMap();
        for (const char *key : {"weightsGiB", "cacheGiB", "scratchGiB", "fits"})
            QCOMPARE(overHub.value(key), onDisk.value(key));
        // The context is at most the model's native one; the cache grows with it, and a smaller cache type shrinks it.
        QCOMPARE(hub->maxContextLength(), local->nativeContext);
        hub->setContextLength(1 << 20);
        QCOMPARE(hub->contextLength(), local->nativeContext);
        const double cacheFull = hub->variants().at(1).toMap().value("fit").toMap().value("cacheGiB").toDouble();
        hub->setContextLength(local->nativeContext / 4);
        QCOMPARE(hub->variants().at(1).toMap().value("fit").toMap().value("cacheGiB").toDouble() * 4, cacheFull);
        hub->setCacheType(int(CacheKind::Q4));
        QVERIFY(hub->variants().at(1).toMap().value("fit").toMap().value("cacheGiB").toDouble() < cacheFull / 4);

        // An EXL3 repository (ExLlamaV3's conversions): each branch's format, bitrate and fit.
        hub->openRepo(kOrg + "ref-s-exl3");
        QTRY_VERIFY_WITH_TIMEOUT(!hub->repoLoading(), 30000);
        QCOMPARE(hub->repoError(), QString());
        QCOMPARE(hub->variants().size(), 2);
        double lastBpw = 0;
        for (int i = 0; i < 2; ++i) {
            const QVariantMap v = hub->variants().at(i).toMap();
            QCOMPARE(v.value("label").toString(), QStringList({QStringLiteral("2.0bpw"), QStringLiteral("4.0bpw")}).at(i));
            QCOMPARE(v.value("format").toString(), QStringLiteral("EXL3"));
            QVERIFY2(v.value("bpw").toDouble() > lastBpw, qPrintable(v.value("bpw").toString()));
            lastBpw = v.value("bpw").toDouble();
            QVERIFY(v.value("fit").toMap().value("available").toBool());
            QVERIFY(v.value("fit").toMap().value("weightsGiB").toDouble() > 0);
        }

        // Bitrates in folders of one branch.
        hub->openRepo(kOrg + "ref-subfolders");
        QTRY_VERIFY_WITH_TIMEOUT(!hub->repoLoading(), 30000);
        QStringList labels;
        for (const QVariant &v : hub->variants())
            labels.append(v.toMap().value("label").toString());
        QCOMPARE(labels, QStringList({QStringLiteral("s-3.0bpw"), QStringLiteral("xs-4.0bpw")}));
    }

    void cancelThenResume()
    {
        const QString fixture = fixtureModel(QStringLiteral("ref-s-4.0bpw"));
        const QByteArray sha = sha256Of(fixture + QStringLiteral("/output.safetensors"));
        m_server.get(QStringLiteral("/_test/reset"));
        m_server.get(QStringLiteral("/_test/fault?stall=") + QString::fromLatin1(sha));  // 64 KiB, then held
        auto download = makeDownload();
        QVERIFY(download->start(kOrg + "ref-s-exl2", QStringLiteral("4.0bpw"), {}));
        QVERIFY(download->running());
        QVERIFY(!download->start(kOrg + "ref-s-exl2", QStringLiteral("4.0bpw"), {}));  // one at a time
        // The held file's first 64 KiB are on disk, and the rest does not come.
        const QString incomplete = blobs(QStringLiteral("ref-s-exl2")) + u'/' + QString::fromLatin1(sha) + QStringLiteral(".incomplete");
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(incomplete).size() >= 65536, 10000);
        QTRY_VERIFY(download->bytesTotal() > 13000000);
        QCOMPARE(download->name(), kOrg + "ref-s-exl2:4.0bpw");
        // Cancel stops the transfer at once, though the server still holds it.
        download->cancel();
        QTRY_VERIFY_WITH_TIMEOUT(!download->running(), 2000);
        m_server.get(QStringLiteral("/_test/release"));
        QCOMPARE(download->error(), QString());
        QVERIFY(download->finishedPath().isEmpty());
        QVERIFY(!download->interrupted());  // cancelled by the user: nothing offered at the next start
        QVERIFY(!QFile::exists(blobs(QStringLiteral("ref-s-exl2")) + u'/' + QString::fromLatin1(sha)));
        const qint64 kept = QFileInfo(incomplete).size();
        QVERIFY2(kept >= 65536, qPrintable(QString::number(kept)));

        // Started again: the kept bytes are continued with a Range request.
        m_server.get(QStringLiteral("/_test/reset"));
        QSignalSpy finished(download.get(), &HubDownload::finished);
        QVERIFY(download->start(kOrg + "ref-s-exl2", QStringLiteral("4.0bpw"), {}));
        QVERIFY(finished.wait(30000));
        QCOMPARE(download->error(), QString());
        const QString path = finished.first().first().toString();
        QCOMPARE(download->finishedPath(), path);
        QVERIFY(path.contains(QStringLiteral("models--exl-test--ref-s-exl2/snapshots/")));
        QString why;
        QVERIFY2(sameFiles(fixture, path, &why), qPrintable(why));
        const QStringList ranges = rangesFor(sha);
        QCOMPARE(ranges.size(), 1);
        QVERIFY2(ranges.first().startsWith(QStringLiteral("bytes=")) && !ranges.first().startsWith(QStringLiteral("bytes=0-")),
                 qPrintable(ranges.first()));
        QCOMPARE(download->bytesDone(), download->bytesTotal());
    }

    void interruptedDownloadOfferedAtTheNextStart()
    {
        QTemporaryDir data;
        const QString settingsFile = data.filePath(QStringLiteral("settings.ini"));
        const QString fixture = fixtureModel(QStringLiteral("ref-s-6.0bpw"));
        const QByteArray sha = sha256Of(fixture + QStringLiteral("/output.safetensors"));
        m_server.get(QStringLiteral("/_test/reset"));
        m_server.get(QStringLiteral("/_test/fault?times=20&cut=") + QString::fromLatin1(sha));  // every try cut at half
        {
            SettingsViewModel settings(settingsFile);
            auto download = makeDownload();
            connect(download.get(), &HubDownload::pendingChanged, &settings, &SettingsViewModel::setHubPendingDownload);
            QVERIFY(download->start(kOrg + "ref-s-exl2", QStringLiteral("6.0bpw"), {}));
            QCOMPARE(settings.hubPendingDownload().value("revision").toString(), QStringLiteral("6.0bpw"));
            QTRY_VERIFY_WITH_TIMEOUT(!download->running(), 30000);
            QVERIFY2(download->error().contains(QStringLiteral("try again")), qPrintable(download->error()));
            QVERIFY(download->interrupted());
        }
        // The next start: the settings offer it, Resume continues it with Range requests.
        m_server.get(QStringLiteral("/_test/reset"));
        SettingsViewModel settings(settingsFile);
        QCOMPARE(settings.hubPendingDownload().value("repo").toString(), kOrg + "ref-s-exl2");
        auto download = makeDownload();
        download->setPending(settings.hubPendingDownload());
        connect(download.get(), &HubDownload::pendingChanged, &settings, &SettingsViewModel::setHubPendingDownload);
        QVERIFY(download->interrupted());
        QCOMPARE(download->name(), kOrg + "ref-s-exl2:6.0bpw");
        QSignalSpy finished(download.get(), &HubDownload::finished);
        QVERIFY(download->resume());
        QVERIFY(finished.wait(30000));
        QString why;
        QVERIFY2(sameFiles(fixture, finished.first().first().toString(), &why), qPrintable(why));
        const QStringList ranges = rangesFor(sha);
        QCOMPARE(ranges.size(), 1);
        QVERIFY2(!ranges.first().isEmpty() && !ranges.first().startsWith(QStringLiteral("bytes=0-")), qPrintable(ranges.first()));
        QVERIFY(!download->interrupted());
        QVERIFY(settings.hubPendingDownload().isEmpty());
    }

    void gatedRepositoryNeedsAToken()
    {
        auto download = makeDownload();
        auto hub = makeHub(download.get());
        hub->openRepo(kOrg + "ref-xs-gated");
        QTRY_VERIFY_WITH_TIMEOUT(!hub->repoLoading(), 30000);
        QCOMPARE(hub->variants().size(), 1);
        const QString noFit = hub->variants().first().toMap().value("error").toString();
        QVERIFY2(noFit.contains(QStringLiteral("gated")) && noFit.contains(QStringLiteral("Settings")), qPrintable(noFit));

        hub->downloadVariant(0);
        QVERIFY(download->running());
        QTRY_VERIFY_WITH_TIMEOUT(!download->running(), 15000);
        QVERIFY2(download->error().contains(QStringLiteral("is gated")) && download->error().contains(QStringLiteral("Settings"))
                     && download->error().contains(m_server.endpoint() + QStringLiteral("/exl-test/ref-xs-gated")),
                 qPrintable(download->error()));
        // A wrong token: refused, and said so.
        m_token = QStringLiteral("hf_wrong");
        QVERIFY(download->resume());
        QTRY_VERIFY_WITH_TIMEOUT(!download->running(), 15000);
        QVERIFY2(download->error().contains(QStringLiteral("token was refused")) && download->error().contains(QStringLiteral("403")),
                 qPrintable(download->error()));
        // The token in Settings: the fit and the download.
        m_token = kToken;
        hub->openRepo(kOrg + "ref-xs-gated");
        QTRY_VERIFY_WITH_TIMEOUT(!hub->repoLoading(), 30000);
        QCOMPARE(hub->variants().first().toMap().value("error").toString(), QString());
        QVERIFY(hub->variants().first().toMap().value("fit").toMap().value("available").toBool());
        QSignalSpy finished(download.get(), &HubDownload::finished);
        hub->downloadVariant(0);
        QVERIFY(finished.wait(30000));
        QString why;
        QVERIFY2(sameFiles(fixtureModel(QStringLiteral("ref-xs-4.0bpw")), finished.first().first().toString(), &why), qPrintable(why));
        QTRY_VERIFY(hub->variants().first().toMap().value("downloaded").toBool());
        m_token.clear();
    }

    void offlineAnswersFromTheCache()
    {
        qputenv("HF_HUB_OFFLINE", "1");
        auto download = makeDownload();
        auto hub = makeHub(download.get());
        QVERIFY(hub->offline());
        hub->search();
        QTRY_VERIFY_WITH_TIMEOUT(!hub->searching(), 15000);
        QVERIFY2(hub->searchError().contains(QStringLiteral("HF_HUB_OFFLINE")), qPrintable(hub->searchError()));
        // A variant in the cache (fetched above) comes from it; one that is not says what to do.
        QSignalSpy finished(download.get(), &HubDownload::finished);
        QVERIFY(download->start(kOrg + "ref-s-exl2", QStringLiteral("4.0bpw"), {}));
        QVERIFY(finished.wait(15000));
        QString why;
        QVERIFY2(sameFiles(fixtureModel(QStringLiteral("ref-s-4.0bpw")), finished.first().first().toString(), &why), qPrintable(why));
        QVERIFY(download->start(kOrg + "ref-s-exl2", QStringLiteral("3.0bpw"), {}));
        QTRY_VERIFY_WITH_TIMEOUT(!download->running(), 15000);
        QVERIFY2(download->error().contains(QStringLiteral("HF_HUB_OFFLINE")), qPrintable(download->error()));
        qunsetenv("HF_HUB_OFFLINE");
    }

    // Each kind of failure tells what to do, with the engine's details.
    void errorMessagesSayWhatToDo()
    {
        using exl::hub::HubError;
        using K = exl::hub::HubErrorKind;
        const exl::hub::HubConfig c = config();
        const QString full = HubViewModel::errorMessage(
            HubError(K::disk_full, "not enough free disk space: 14 MB to download, 2 MB free", "exl-test/ref-s-exl2:4.0bpw"), {}, c);
        QVERIFY2(full.contains(QStringLiteral("Not enough disk space")) && full.contains(QStringLiteral("2 MB free"))
                     && full.contains(QStringLiteral("HF_HOME")), qPrintable(full));
        const QString net = HubViewModel::errorMessage(HubError(K::network, "cannot connect"), {}, c);
        QVERIFY2(net.contains(m_server.endpoint()) && net.contains(QStringLiteral("cannot connect")), qPrintable(net));
        const QString missing = HubViewModel::errorMessage(HubError(K::not_found, "repository not found", "exl-test/nope"), {}, c);
        QVERIFY2(missing.contains(QStringLiteral("exl-test/nope")) && missing.contains(QStringLiteral("Check the name")), qPrintable(missing));
    }

    // The app as it ships (the engine on the CPU): a variant downloaded from the Hub tab is listed
    // under its Hub name, selected, loads, and answers.
    void downloadedModelListedAndLoaded()
    {
        QTemporaryDir data;
        AppOptions options;
        options.dataDir = data.path();
        options.device = QStringLiteral("cpu");
        auto app = AppContext::createDefault(options);
        QTRY_VERIFY_WITH_TIMEOUT(!app->models()->scanning(), 30000);
        QVERIFY(app->models()->modelFolders().contains(m_home.filePath(QStringLiteral("hub"))));
        HubViewModel *hub = app->hub();
        hub->openRepo(kOrg + "ref-subfolders");
        QTRY_VERIFY_WITH_TIMEOUT(!hub->repoLoading(), 30000);
        QCOMPARE(hub->variants().size(), 2);
        hub->downloadVariant(1);  // xs-4.0bpw
        QTRY_VERIFY_WITH_TIMEOUT(app->models()->currentName() == kOrg + "ref-subfolders:main/xs-4.0bpw", 30000);
        QVERIFY(hub->variants().at(1).toMap().value("downloaded").toBool());
        QVERIFY(!hub->variants().at(0).toMap().value("downloaded").toBool());
        QVERIFY(QCoro::waitFor(app->models()->loadSelected()));
        QCOMPARE(app->models()->loadedModelName(), kOrg + "ref-subfolders:main/xs-4.0bpw");
        SamplingSettings sampling = app->settings()->sampling();
        sampling.maxNewTokens = 8;
        app->chat()->setSampling(sampling);
        QSignalSpy replied(app->chat(), &ChatViewModel::replyFinished);
        app->chat()->send(QStringLiteral("Hello"));
        QVERIFY(replied.wait(60000));
        QCOMPARE(app->chat()->rowCount(), 2);
        QVERIFY(!app->chat()->data(app->chat()->index(1), ChatViewModel::TextRole).toString().isEmpty());
    }

    // Through the Qt transport as through exl's: a connection dropped at half a file is resumed in
    // the same download with a Range request, and a cached blob whose bytes were altered fails its
    // sha256 check and is fetched again whole. (Last: the cases before expect no 3.0bpw in the cache.)
    void droppedTransferResumedAndCorruptBlobFetchedAgain()
    {
        const QString fixture = fixtureModel(QStringLiteral("ref-s-3.0bpw"));
        const QByteArray sha = sha256Of(fixture + QStringLiteral("/output.safetensors"));
        const qint64 size = QFileInfo(fixture + QStringLiteral("/output.safetensors")).size();
        m_server.get(QStringLiteral("/_test/reset"));
        m_server.get(QStringLiteral("/_test/fault?cut=") + QString::fromLatin1(sha) + QStringLiteral("&times=1"));
        auto download = makeDownload();
        auto run = [&] {
            QSignalSpy finished(download.get(), &HubDownload::finished);
            if (!download->start(kOrg + "ref-s-exl2", QStringLiteral("3.0bpw"), {}) || !finished.wait(30000))
                return QString();
            return download->finishedPath();
        };
        QString path = run();
        QVERIFY2(!path.isEmpty(), qPrintable(download->error()));
        QString why;
        QVERIFY2(sameFiles(fixture, path, &why), qPrintable(why));
        QCOMPARE(rangesFor(sha), QStringList({QString(), QStringLiteral("bytes=%1-").arg(size / 2)}));

        const QString blob = blobs(QStringLiteral("ref-s-exl2")) + u'/' + QString::fromLatin1(sha);
        {
            QFile f(blob);
            QVERIFY(f.open(QIODevice::ReadWrite));
            char c = 0;
            QVERIFY(f.seek(size / 3) && f.getChar(&c));
            QVERIFY(f.seek(size / 3) && f.putChar(char(c ^ 0x5A)));
        }
        QVERIFY(sha256Of(blob) != sha);
        m_server.get(QStringLiteral("/_test/reset"));
        path = run();
        QVERIFY2(!path.isEmpty(), qPrintable(download->error()));
        QVERIFY2(sameFiles(fixture, path, &why), qPrintable(why));
        QCOMPARE(sha256Of(blob), sha);
        QCOMPARE(rangesFor(sha), QStringList({QString()}));
    }

    void cleanupTestCase()
    {
        m_models.reset();
    }
};

QTEST_MAIN(HubTest)
#include "ui_hub_test.moc"
