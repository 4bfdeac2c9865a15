#include "modelscanner.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMetaObject>
#include <QSet>
#include <QThread>

#include <exl/model.h>
#include <exl/model_config.h>
#include <exl/tokenizer.h>

QByteArray vocabularyDigest(const exl::Tokenizer &tokenizer)
{
    QCryptographicHash hash(QCryptographicHash::Sha256);
    const auto addNumber = [&hash](quint64 n) {
        char bytes[8];
        for (int i = 0; i < 8; ++i)
            bytes[i] = char((n >> (8 * i)) & 0xff);
        hash.addData(QByteArrayView(bytes, 8));
    };
    const int size = tokenizer.vocab_size();
    addNumber(quint64(size));
    for (int id = 0; id < size; ++id) {
        const std::string piece = tokenizer.piece(id);
        addNumber(piece.size());  // length first: no two vocabularies hash the same bytes
        hash.addData(QByteArrayView(piece.data(), qsizetype(piece.size())));
    }
    return hash.result();
}

QString modelFolderName(const QString &path)
{
    // .../models--ORG--NAME/snapshots/COMMIT[/SUBFOLDER]: the Hugging Face cache's layout.
    const QStringList parts = path.split(u'/', Qt::SkipEmptyParts);
    for (qsizetype i = parts.size() - 3; i >= 0; --i) {
        if (!parts.at(i).startsWith(QLatin1String("models--")) || parts.at(i + 1) != QLatin1String("snapshots"))
            continue;
        const QStringList repo = parts.at(i).mid(8).split(QStringLiteral("--"));
        if (repo.size() != 2)
            break;
        const QString commit = parts.at(i + 2);
        QString revision = commit.left(12);
        // The branch whose ref points at this commit (refs/main, refs/4.0bpw ...).
        const QDir refs(QStringLiteral("/") + parts.mid(0, i + 1).join(u'/') + QStringLiteral("/refs"));
        for (const QString &branch : refs.entryList(QDir::Files, QDir::Name)) {
            QFile f(refs.filePath(branch));
            if (f.open(QIODevice::ReadOnly) && QString::fromLatin1(f.readAll()).trimmed() == commit) {
                revision = branch;
                break;
            }
        }
        const QString sub = parts.mid(i + 3).join(u'/');
        return repo.join(u'/') + u':' + revision + (sub.isEmpty() ? QString() : u'/' + sub);
    }
    return QFileInfo(path).fileName();
}

ModelInfo describeModel(const exl::Model &model, const QString &dir)
{
    const exl::ModelConfig &config = model.config();
    const exl::ModelSummary summary = model.summary();
    ModelInfo info;
    info.path = QDir::cleanPath(QFileInfo(dir).absoluteFilePath());
    info.name = modelFolderName(info.path);
    info.architecture = QString::fromStdString(config.model_type);
    info.parameters = summary.parameters;
    info.bpw = summary.quantized ? summary.average_bpw : summary.head_bpw;
    info.headBits = summary.head_bpw;
    info.sizeBytes = qint64(summary.bytes_on_disk);
    info.nativeContext = config.max_position_embeddings;
    if (model.tokenizer())
        info.vocabulary = vocabularyDigest(*model.tokenizer());
    return info;
}

std::optional<ModelInfo> describeModelFolder(const QString &dir)
{
    const QString path = QDir::cleanPath(QFileInfo(dir).absoluteFilePath());
    if (!QFileInfo::exists(QDir(path).filePath(QStringLiteral("config.json"))))
        return std::nullopt;
    try {
        return describeModel(*exl::Model::open(QFile::encodeName(path).toStdString()), path);
    } catch (const std::exception &) {
    }
    ModelInfo info;
    info.path = path;
    info.name = modelFolderName(path);
    info.architecture = QStringLiteral("?");
    try {
        const exl::ModelConfig config = exl::read_model_config(QFile::encodeName(path).toStdString());
        info.architecture = QString::fromStdString(config.model_type);
        info.nativeContext = config.max_position_embeddings;
        if (config.quantization)
            info.bpw = config.quantization->bits;
    } catch (const std::exception &) {
    }
    return info;
}

QList<ModelInfo> scanModelFolders(const QStringList &roots)
{
    return scanModelFolders(roots, describeModelFolder);
}

QList<ModelInfo> scanModelFolders(const QStringList &roots, const DescribeModelFolder &describe, std::stop_token stop)
{
    QList<ModelInfo> out;
    QSet<QString> seen;
    auto add = [&](const QString &dir) {
        const QString path = QDir::cleanPath(QFileInfo(dir).absoluteFilePath());
        if (seen.contains(path) || stop.stop_requested())
            return;
        if (std::optional<ModelInfo> info = describe(path)) {
            seen.insert(path);
            out.append(*info);
        }
    };
    // A model folder ends the descent (its own subfolders are its parts); hidden folders and
    // folders past kMaxScanDepth are not searched.
    std::function<void(const QString &, int)> walk = [&](const QString &dir, int depth) {
        if (stop.stop_requested())
            return;
        const qsizetype before = out.size();
        add(dir);
        if (out.size() > before || depth >= kMaxScanDepth)
            return;
        const QStringList children = QDir(dir).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
        for (const QString &child : children)
            walk(QDir(dir).filePath(child), depth + 1);
    };
    for (const QString &root : roots) {
        if (root.isEmpty() || !QFileInfo(root).isDir())
            continue;
        walk(root, 0);
    }
    return out;
}

QStringList fixtureModelRoots()
{
    QString fixtures = qEnvironmentVariable("EXL_FIXTURES");
#ifdef EXL_SOURCE_DIR
    if (fixtures.isEmpty())
        fixtures = QStringLiteral(EXL_SOURCE_DIR "/../shared/fixtures");
#endif
    QStringList roots;
    if (fixtures.isEmpty())
        return roots;
    for (const char *sub : {"models/exl2", "models/hf"}) {
        const QString dir = QDir::cleanPath(QDir(fixtures).filePath(QString::fromLatin1(sub)));
        if (QFileInfo(dir).isDir())
            roots.append(dir);
    }
    return roots;
}

ModelScanner::ModelScanner(DescribeModelFolder describe, QObject *parent)
    : QObject(parent)
    , m_describe(std::move(describe))
{
    m_pool.setMaxThreadCount(1);  // one scan at a time, in the order asked for
    m_pool.setObjectName(QStringLiteral("ModelScanner"));
}

ModelScanner::~ModelScanner()
{
    m_stop.request_stop();
    m_pool.clear();        // scans not yet started
    m_pool.waitForDone();  // the one in progress stops after its current folder
}

quint64 ModelScanner::scan(const QStringList &roots)
{
    const quint64 request = ++m_lastRequest;
    ++m_pending;
    // The worker reads only its own copies and m_describe (set once, before any scan); `this`
    // outlives it (the destructor waits), and the queued call is dropped if `this` is gone by
    // the time it would be delivered.
    m_pool.start([this, request, roots, describe = m_describe, stop = m_stop.get_token()] {
        ModelScanResult result;
        result.request = request;
        result.roots = roots;
        result.models = scanModelFolders(roots, describe, stop);
        result.scannedOn = QThread::currentThreadId();
        if (stop.stop_requested())
            return;
        QMetaObject::invokeMethod(this, [this, result] {
            --m_pending;
            Q_EMIT finished(result);
        }, Qt::QueuedConnection);
    });
    return request;
}
