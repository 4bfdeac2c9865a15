// Finds model folders on disk and describes them for the model list (name, architecture,
// parameters, bpw, head bits, size, native context) through the engine's own readers; and
// ModelScanner, which does so on a worker thread.
#pragma once
#include <QObject>
#include <QStringList>
#include <QThreadPool>
#include <functional>
#include <optional>
#include <stop_token>

#include "inferencetypes.h"

namespace exl {
class Model;
class Tokenizer;
}

// A folder with a config.json is a model folder. Folders whose files cannot be read are still
// listed (architecture "?"), so loading them shows the engine's error.
std::optional<ModelInfo> describeModelFolder(const QString &dir);
ModelInfo describeModel(const exl::Model &model, const QString &dir);
// The name the model list shows for a model folder: its folder name, or for a snapshot in the
// Hugging Face cache (models--ORG--NAME/snapshots/COMMIT[/SUB]) "ORG/NAME:BRANCH[/SUB]".
QString modelFolderName(const QString &path);

// SHA-256 over the vocabulary size and the piece of every id: equal digests mean the vocabularies
// exl::check_draft_vocabulary accepts as model and draft (same size, every token the same).
QByteArray vocabularyDigest(const exl::Tokenizer &tokenizer);

// Each root that is a model folder itself, and each model folder inside a root down to
// kMaxScanDepth levels (not inside another model folder, not in hidden folders): a models folder
// that sorts its models into exl2/, hf/ or ORG/NAME/ subfolders, and the Hugging Face cache's
// models--ORG--NAME/snapshots/COMMIT folders, are found. Sorted by name within a folder, depth
// first; duplicates (same absolute path) dropped.
inline constexpr int kMaxScanDepth = 4;
QList<ModelInfo> scanModelFolders(const QStringList &roots);
// The same with `describe` in place of describeModelFolder, stopping between folders once `stop`
// is requested (what was found so far is returned).
using DescribeModelFolder = std::function<std::optional<ModelInfo>(const QString &dir)>;
QList<ModelInfo> scanModelFolders(const QStringList &roots, const DescribeModelFolder &describe,
                                  std::stop_token stop = {});

// The fixture models of a source checkout, so a fresh clone has something to chat with:
// $EXL_FIXTURES (or <source>/../shared/fixtures)/models/exl2 and /hf, those that exist.
QStringList fixtureModelRoots();

// One scan's outcome, a value delivered to the scanner's thread.
struct ModelScanResult {
    quint64 request = 0;         // as returned by ModelScanner::scan
    QStringList roots;
    QList<ModelInfo> models;     // as scanModelFolders(roots) lists them
    Qt::HANDLE scannedOn = {};   // the id of the worker thread that scanned (never the caller's)
};
Q_DECLARE_METATYPE(ModelScanResult)

// Scans model folders off the caller's (the GUI) thread: opening a model parses its tokenizer
// and hashes its vocabulary, seconds for a large one. Scans run one after another on a worker
// thread of the scanner's own; each result comes back through finished(), emitted on the
// scanner's thread (a queued call from the worker), so its receivers may touch Qt models. The
// worker touches nothing but the result it builds.
class ModelScanner : public QObject
{
    Q_OBJECT
public:
    // `describe` replaces describeModelFolder (tests); it is called on the worker thread.
    explicit ModelScanner(DescribeModelFolder describe = describeModelFolder, QObject *parent = nullptr);
    // Stops the scans in progress between two folders and waits for them; their results are
    // dropped.
    ~ModelScanner() override;

    // Starts a scan of `roots` and returns its request number (increasing from 1); finished()
    // follows, never before this returns.
    quint64 scan(const QStringList &roots);
    bool busy() const { return m_pending > 0; }

Q_SIGNALS:
    void finished(const ModelScanResult &result);

private:
    DescribeModelFolder m_describe;
    QThreadPool m_pool;
    std::stop_source m_stop;
    quint64 m_lastRequest = 0;
    int m_pending = 0;
};
