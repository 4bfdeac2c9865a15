// ModelScanner and ModelManager's scans: model folders are described (tokenizers parsed,
// vocabularies hashed) on a worker thread, never on the GUI thread; the GUI thread keeps running
// while a scan is under way; results arrive as values on the GUI thread, where ModelManager
// applies them to its list; a superseded scan's result is dropped; a scanner destroyed mid-scan
// stops and delivers nothing.
#include <QDir>
#include <QFile>
#include <QSemaphore>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QTimer>
#include <QUrl>
#include <qcoro/qcorotask.h>

#include <memory>
#include <thread>

#include "services/fakeinferenceservice.h"
#include "services/modelscanner.h"
#include "services/vramplanner.h"
#include "viewmodels/modelmanager.h"

namespace {
constexpr int kWaitMs = 10000;

// A root with model folders `names` (a config.json each; "{}" is not a readable config, so
// they are listed with architecture "?") and a folder that is no model folder.
bool makeRoot(const QString &root, const QStringList &names)
{
    for (const QString &name : names) {
        const QString dir = QDir(root).filePath(name);
        QFile config(QDir(dir).filePath(QStringLiteral("config.json")));
        if (!QDir().mkpath(dir) || !config.open(QIODevice::WriteOnly) || config.write("{}") != 2)
            return false;
    }
    return QDir().mkpath(QDir(root).filePath(QStringLiteral("not-a-model")));
}

QStringList names(const QList<ModelInfo> &models)
{
    QStringList out;
    for (const ModelInfo &m : models)
        out.append(m.name);
    return out;
}

// What the worker saw: the threads describeModelFolder ran on.
struct Recorder {
    QMutex mutex;
    QList<QThread *> threads;
    QSemaphore *gate = nullptr;  // when set, each folder waits for a permit

    DescribeModelFolder describe()
    {
        return [this](const QString &dir) {
            {
                QMutexLocker lock(&mutex);
                threads.append(QThread::currentThread());
            }
            if (gate)
                gate->acquire();
            return describeModelFolder(dir);
        };
    }
    QList<QThread *> seen()
    {
        QMutexLocker lock(&mutex);
        return threads;
    }
};
}  // namespace

class ModelScannerTest : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_root;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_root = m_dir.filePath(QStringLiteral("models"));
        QVERIFY(makeRoot(m_root, {QStringLiteral("beta-4.0bpw"), QStringLiteral("alpha-6.0bpw")}));
    }

    void scanRunsOffTheGuiThread()
    {
        Recorder recorder;
        ModelScanner scanner(recorder.describe());
        QSignalSpy finished(&scanner, &ModelScanner::finished);
        QThread *deliveredOn = nullptr;
        connect(&scanner, &ModelScanner::finished, this, [&] { deliveredOn = QThread::currentThread(); });

        const quint64 request = scanner.scan({m_root});
        QCOMPARE(request, quint64(1));
        QVERIFY(scanner.busy());
        QCOMPARE(finished.size(), 0);  // never before scan() returns
        QVERIFY(finished.wait(kWaitMs));
        QVERIFY(!scanner.busy());

        // Every folder was looked at on the worker, none on the GUI thread ...
        const QList<QThread *> threads = recorder.seen();
        QCOMPARE(threads.size(), 4);  // the root itself, its three folders
        for (QThread *t : threads)
            QVERIFY(t != QThread::currentThread());
        // ... and the result came back to the GUI thread, as a value.
        QCOMPARE(deliveredOn, QThread::currentThread());
        const auto result = finished.at(0).at(0).value<ModelScanResult>();
        QCOMPARE(result.request, request);
        QCOMPARE(result.roots, QStringList{m_root});
        QVERIFY(result.scannedOn != QThread::currentThreadId());
        QCOMPARE(names(result.models), (QStringList{QStringLiteral("alpha-6.0bpw"), QStringLiteral("beta-4.0bpw")}));
        QCOMPARE(result.models.at(0).path, QDir::cleanPath(QDir(m_root).filePath(QStringLiteral("alpha-6.0bpw"))));
        QCOMPARE(result.models.at(0).architecture, QStringLiteral("?"));
        // The same as the synchronous scan.
        QCOMPARE(names(scanModelFolders({m_root})), names(result.models));
    }

    void guiThreadRunsDuringAScan()
    {
        Recorder recorder;
        QSemaphore gate;
        recorder.gate = &gate;
        ModelScanner scanner(recorder.describe());
        QSignalSpy finished(&scanner, &ModelScanner::finished);
        scanner.scan({m_root});

        // The worker is held inside the first folder; the GUI thread's event loop still runs.
        QTRY_COMPARE_WITH_TIMEOUT(recorder.seen().size(), 1, kWaitMs);
        int ticks = 0;
        QTimer timer;
        connect(&timer, &QTimer::timeout, this, [&] { ++ticks; });
        timer.start(5);
        QTRY_VERIFY_WITH_TIMEOUT(ticks >= 3, kWaitMs);
        QCOMPARE(finished.size(), 0);
        QVERIFY(scanner.busy());

        gate.release(4);
        QVERIFY(finished.wait(kWaitMs));
        QCOMPARE(finished.at(0).at(0).value<ModelScanResult>().models.size(), 2);
    }

    void destroyedMidScanDeliversNothing()
    {
        Recorder recorder;
        QSemaphore gate;
        recorder.gate = &gate;
        auto scanner = std::make_unique<ModelScanner>(recorder.describe());
        bool delivered = false;
        connect(scanner.get(), &ModelScanner::finished, this, [&] { delivered = true; });
        scanner->scan({m_root});
        scanner->scan({m_root});  // waits its turn; dropped unstarted
        QTRY_COMPARE_WITH_TIMEOUT(recorder.seen().size(), 1, kWaitMs);
        // The worker is let go only once the destructor has asked it to stop and waits for it.
        std::thread releaser([&gate] {
            QThread::msleep(200);
            gate.release(100);
        });
        scanner.reset();  // stops after the folder at hand and waits for the worker
        releaser.join();
        QCoreApplication::processEvents();
        QVERIFY(!delivered);
        QCOMPARE(recorder.seen().size(), 1);  // no other folder, and the second scan never ran
    }

    void modelManagerAppliesResultsOnTheGuiThread()
    {
        FakeInferenceService service(QStringLiteral("cuda:0"));
        ModelManager models(&service, std::make_unique<UnavailableVramPlanner>());
        Recorder recorder;
        QSemaphore gate;
        recorder.gate = &gate;
        models.setScanner(std::make_unique<ModelScanner>(recorder.describe()));
        const int own = models.rowCount();  // the service's models
        QThread *resetOn = nullptr;
        connect(&models, &QAbstractItemModel::modelReset, this, [&] { resetOn = QThread::currentThread(); });
        QSignalSpy scanning(&models, &ModelManager::scanningChanged);

        models.setModelFolders({m_root});
        QVERIFY(models.scanning());
        QCOMPARE(scanning.size(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(recorder.seen().size(), 1, kWaitMs);
        QCoreApplication::processEvents();
        QCOMPARE(models.rowCount(), own);  // nothing applied while the worker is busy
        QVERIFY(!resetOn);

        gate.release(100);
        QVERIFY(scanning.wait(kWaitMs));
        QVERIFY(!models.scanning());
        QCOMPARE(models.rowCount(), own + 2);
        QCOMPARE(resetOn, QThread::currentThread());
        for (QThread *t : recorder.seen())
            QVERIFY(t != QThread::currentThread());
        QVERIFY(models.indexOfPath(QDir(m_root).filePath(QStringLiteral("beta-4.0bpw"))) >= own);
        QCOMPARE(models.data(models.index(own), ModelManager::NameRole).toString(), QStringLiteral("alpha-6.0bpw"));
    }

    void supersededScanIsDropped()
    {
        const QString other = m_dir.filePath(QStringLiteral("other"));
        QVERIFY(makeRoot(other, {QStringLiteral("gamma-3.0bpw")}));
        FakeInferenceService service(QStringLiteral("cuda:0"));
        ModelManager models(&service, std::make_unique<UnavailableVramPlanner>());
        const int own = models.rowCount();
        QSignalSpy reset(&models, &QAbstractItemModel::modelReset);
        models.setModelFolders({m_root});
        models.setModelFolders({other});  // before the first scan is back
        QCoro::waitFor(models.scanned());
        QCOMPARE(reset.size(), 1);  // the first scan's result was never applied
        QCOMPARE(models.rowCount(), own + 1);
        QCOMPARE(models.data(models.index(own), ModelManager::NameRole).toString(), QStringLiteral("gamma-3.0bpw"));
    }

    void addFolderScansOffTheGuiThread()
    {
        FakeInferenceService service(QStringLiteral("cuda:0"));
        ModelManager models(&service, std::make_unique<UnavailableVramPlanner>());
        Recorder recorder;
        models.setScanner(std::make_unique<ModelScanner>(recorder.describe()));
        const int own = models.rowCount();
        QSignalSpy added(&models, &ModelManager::folderAdded);
        QSignalSpy rejected(&models, &ModelManager::folderRejected);

        // A folder with no model folder: refused, and nothing remembered.
        const QString empty = m_dir.filePath(QStringLiteral("empty"));
        QVERIFY(QDir().mkpath(empty));
        models.addFolder(empty);
        QCOMPARE(rejected.size(), 0);  // the verdict comes from the worker, later
        QVERIFY(rejected.wait(kWaitMs));
        QCOMPARE(rejected.at(0).at(0).toString(), empty);
        QVERIFY(models.modelFolders().isEmpty());

        // A root of model folders, given as a file:// URL: added and listed.
        QVERIFY(QCoro::waitFor(models.addModelFolder(QUrl::fromLocalFile(m_root).toString())));
        QCOMPARE(added.size(), 1);
        QCOMPARE(added.at(0).at(0).toString(), QDir::cleanPath(m_root));
        QCOMPARE(models.modelFolders(), QStringList{QDir::cleanPath(m_root)});
        QCOMPARE(models.rowCount(), own + 2);
        QVERIFY(!recorder.seen().isEmpty());
        for (QThread *t : recorder.seen())
            QVERIFY(t != QThread::currentThread());
    }

    // A models folder that sorts its models into subfolders (exl2/, hf/, ORG/NAME/), as users
    // and the Hugging Face cache do: every model folder down to kMaxScanDepth is found, none
    // inside another model folder, none in hidden folders or deeper.
    void nestedFoldersAreSearched()
    {
        const QString root = m_dir.filePath(QStringLiteral("nested"));
        QVERIFY(makeRoot(QDir(root).filePath(QStringLiteral("exl2")), {QStringLiteral("m-4.0bpw")}));
        QVERIFY(makeRoot(QDir(root).filePath(QStringLiteral("hf")), {QStringLiteral("m-fp16")}));
        QVERIFY(makeRoot(QDir(root).filePath(QStringLiteral("org/name/snapshots")), {QStringLiteral("abc123")}));
        // A model inside a model folder is a part of it, not a model of its own.
        QVERIFY(makeRoot(QDir(root).filePath(QStringLiteral("exl2/m-4.0bpw")), {QStringLiteral("inner")}));
        QVERIFY(makeRoot(QDir(root).filePath(QStringLiteral(".cache")), {QStringLiteral("hidden")}));
        QVERIFY(makeRoot(QDir(root).filePath(QStringLiteral("a/b/c/d")), {QStringLiteral("too-deep")}));
        QCOMPARE(kMaxScanDepth, 4);

        const QList<ModelInfo> found = scanModelFolders({root});
        QCOMPARE(names(found), (QStringList{QStringLiteral("m-4.0bpw"), QStringLiteral("m-fp16"), QStringLiteral("abc123")}));
        QCOMPARE(found.at(2).path, QDir::cleanPath(QDir(root).filePath(QStringLiteral("org/name/snapshots/abc123"))));

        // The scanner (the app's path) finds the same.
        ModelScanner scanner;
        QSignalSpy finished(&scanner, &ModelScanner::finished);
        scanner.scan({root});
        QVERIFY(finished.wait(kWaitMs));
        QCOMPARE(names(finished.at(0).at(0).value<ModelScanResult>().models), names(found));
    }
};

QTEST_GUILESS_MAIN(ModelScannerTest)

#include "ui_modelscanner_test.moc"
