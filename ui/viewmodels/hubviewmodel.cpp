#include "hubviewmodel.h"

#include <QCoreApplication>
#include <QDate>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>

#include "hubdownload.h"
#include "services/qthubtransport.h"

QString HubViewModel::errorMessage(const exl::hub::HubError &e, const QString &repo, const exl::hub::HubConfig &config)
{
    using K = exl::hub::HubErrorKind;
    const QString endpoint = QString::fromStdString(config.endpoint);
    const QString page = repo.isEmpty() ? endpoint : endpoint + u'/' + repo;
    const QString detail = QString::fromStdString(e.what());
    switch (e.hub_kind()) {
    case K::auth:
        if (config.token.empty())
            return tr("%1 is gated: sign in on %2 and accept its terms, create a read token in your Hugging Face "
                      "account settings, enter it in Settings under “Hugging Face token”, then try again.")
                .arg(repo.isEmpty() ? detail : repo, page);
        return tr("The Hugging Face token was refused for %1 (HTTP %2): accept the repository's terms on %3 with the "
                  "account the token belongs to, and check the token in Settings (it needs read access).")
            .arg(repo.isEmpty() ? detail : repo)
            .arg(e.http_status())
            .arg(page);
    case K::not_found:
        return tr("Not found on the Hub: %1. Check the name; a private repository needs a token in Settings.").arg(detail);
    case K::offline:
        return tr("Offline: HF_HUB_OFFLINE is set, so the Hub is not contacted. Start EXL Studio without it to search and "
                  "download (models in the cache are listed on “On this computer”).");
    case K::disk_full:
        return tr("Not enough disk space (%1). Free some space, or start EXL Studio with HF_HOME set to a folder on a "
                  "larger disk; the download continues where it stopped.")
            .arg(detail);
    case K::network:
        return tr("Cannot reach the Hub at %1 (%2). Check the network connection and try again; a download continues "
                  "where it stopped.")
            .arg(endpoint, detail);
    case K::checksum:
        return tr("A downloaded file was damaged (%1). Try again: it is fetched anew.").arg(detail);
    case K::cancelled:
        return tr("Stopped.");
    case K::http:
    case K::bad_reply:
        break;
    }
    return tr("The Hub answered with an error: %1").arg(detail);
}

namespace {

QVariantMap summaryMap(const exl::hub::ModelSummary &m)
{
    QStringList tags;
    for (const std::string &t : m.tags) {
        const QString tag = QString::fromStdString(t);
        // The words a user recognises; the Hub's own bookkeeping tags (license:, region:...) stay out.
        if (!tag.contains(u':') && tag != QLatin1String("endpoints_compatible") && tags.size() < 6)
            tags.append(tag);
    }
    const QString id = QString::fromStdString(m.id);
    return {{QStringLiteral("id"), id},
            {QStringLiteral("name"), id.section(u'/', 1)},
            {QStringLiteral("author"), QString::fromStdString(m.author)},
            {QStringLiteral("downloads"), double(m.downloads)},
            {QStringLiteral("likes"), double(m.likes)},
            {QStringLiteral("updated"), QDate::fromString(QString::fromStdString(m.last_modified).left(10), Qt::ISODate)},
            {QStringLiteral("tags"), tags},
            {QStringLiteral("gated"), m.gated},
            {QStringLiteral("format"), m.has_tag("exl3") ? QStringLiteral("EXL3")
                                       : m.has_tag("exl2") ? QStringLiteral("EXL2")
                                                           : QString()}};
}

// The variants of one revision: each folder holding a config.json (the top level first).
QList<HubVariant> variantsOf(const exl::hub::RepoRef &ref, const std::vector<exl::hub::RepoFile> &files)
{
    QList<HubVariant> out;
    for (const exl::hub::RepoFile &f : files) {
        const QString path = QString::fromStdString(f.path);
        if (path != QLatin1String("config.json") && !path.endsWith(QLatin1String("/config.json")))
            continue;
        HubVariant v;
        v.branch = QString::fromStdString(ref.name);
        v.commit = QString::fromStdString(ref.commit);
        v.folder = path.section(u'/', 0, -2);
        out.append(v);
    }
    for (HubVariant &v : out) {
        const QString prefix = v.folder.isEmpty() ? QString() : v.folder + u'/';
        for (const exl::hub::RepoFile &f : files) {
            const QString path = QString::fromStdString(f.path);
            if (path.startsWith(prefix)) {
                v.files.append(path);
                v.sizeBytes += f.size;
            }
        }
    }
    return out;
}

// Format, bpw and context length from a config.json.
void readConfig(HubVariant &v, const QString &configPath)
{
    QFile f(configPath);
    if (!f.open(QIODevice::ReadOnly))
        return;
    const QJsonObject c = QJsonDocument::fromJson(f.readAll()).object();
    const QJsonObject q = c.value(QLatin1String("quantization_config")).toObject();
    if (!q.isEmpty()) {
        v.format = q.value(QLatin1String("quant_method")).toString(QStringLiteral("quantized"));
        v.bpw = q.value(QLatin1String("bits")).toDouble();
    } else {
        v.format = c.value(QLatin1String("torch_dtype")).toString(QStringLiteral("fp16"));
    }
    v.nativeContext = c.value(QLatin1String("max_position_embeddings")).toInt();
}

bool isDownloaded(const exl::hub::HubConfig &config, const QString &repo, const HubVariant &v, QString *path)
{
    const auto snapshot = exl::hub::find_cached(config.cache_dir, repo.toStdString(), v.commit.toStdString());
    if (!snapshot)
        return false;
    const QDir dir(QString::fromStdString(snapshot->string()));
    for (const QString &file : v.files)
        if (!QFileInfo::exists(dir.filePath(file)))  // follows the snapshot's links to the blobs
            return false;
    *path = QDir::cleanPath(dir.filePath(v.folder.isEmpty() ? QStringLiteral(".") : v.folder));
    return true;
}

}  // namespace

HubViewModel::HubViewModel(HubConfigSource config, std::shared_ptr<exl::hub::Transport> transport, HubFitSource fit,
                           HubDownload *download, QObject *parent)
    : QObject(parent), m_config(std::move(config)), m_transport(std::move(transport)), m_fit(std::move(fit)),
      m_download(download)
{
    m_pool.setMaxThreadCount(2);  // a search and a repository page at once
    connect(m_download, &HubDownload::finished, this, &HubViewModel::refreshDownloaded);
}

HubViewModel::~HubViewModel()
{
    // Requests under way stop at once (a stalled server would hold the app's exit otherwise).
    if (auto *qt = dynamic_cast<QtHubTransport *>(m_transport.get()))
        qt->abortAll();
    m_pool.waitForDone();
}

exl::hub::HubClient HubViewModel::client() const
{
    return exl::hub::HubClient(m_config(), m_transport);
}

QString HubViewModel::endpoint() const
{
    return QString::fromStdString(m_config().endpoint);
}

bool HubViewModel::offline() const
{
    return m_config().offline;
}

void HubViewModel::setQuery(const QString &text)
{
    if (text == m_query)
        return;
    m_query = text;
    Q_EMIT searchSettingsChanged();
}

void HubViewModel::setFormatFilter(int filter)
{
    filter = std::clamp(filter, 0, 2);
    if (filter == m_formatFilter)
        return;
    m_formatFilter = filter;
    Q_EMIT searchSettingsChanged();
}

void HubViewModel::setSortOrder(int order)
{
    order = std::clamp(order, 0, 1);
    if (order == m_sortOrder)
        return;
    m_sortOrder = order;
    Q_EMIT searchSettingsChanged();
}

void HubViewModel::search()
{
    const quint64 request = ++m_searchRequest;
    exl::hub::SearchQuery q;
    q.text = m_query.trimmed().toStdString();
    if (m_formatFilter == 1)
        q.tags = {"exl2"};
    else if (m_formatFilter == 2)
        q.tags = {"exl3"};
    q.sort = m_sortOrder == 1 ? exl::hub::SearchSort::recent : exl::hub::SearchSort::downloads;
    q.limit = 50;
    m_searching = true;
    m_searchError.clear();
    Q_EMIT searchStateChanged();
    m_pool.start([this, request, q, client = client()] {
        QVariantList rows;
        QString error;
        try {
            for (const exl::hub::ModelSummary &m : client.search(q))
                rows.append(summaryMap(m));
        } catch (const exl::hub::HubError &e) {
            error = errorMessage(e, {}, client.config());
        } catch (const std::exception &e) {
            error = QString::fromStdString(e.what());
        }
        QMetaObject::invokeMethod(this, [this, request, rows, error] {
            if (request != m_searchRequest)
                return;  // a newer search is under way
            m_searching = false;
            m_searched = true;
            m_results = rows;
            m_searchError = error;
            Q_EMIT searchStateChanged();
        }, Qt::QueuedConnection);
    });
}

void HubViewModel::openRepo(const QString &repoId)
{
    const quint64 request = ++m_repoRequest;
    m_repoId = repoId;
    m_repo.clear();
    for (const QVariant &row : std::as_const(m_results))
        if (row.toMap().value(QStringLiteral("id")).toString() == repoId)
            m_repo = row.toMap();
    m_repoLoading = true;
    m_repoError.clear();
    m_variants.clear();
    m_variantList.clear();
    Q_EMIT repoChanged();
    Q_EMIT variantsChanged();
    const QString headersRoot = m_headers.path();
    m_pool.start([this, request, repoId, headersRoot, client = client()] {
        QList<HubVariant> variants;
        QVariantMap summary;
        QString error;
        const std::string repo = repoId.toStdString();
        try {
            summary = summaryMap(client.model_info(repo).summary);
            for (const exl::hub::RepoRef &ref : client.refs(repo)) {
                if (ref.is_tag)
                    continue;
                for (HubVariant v : variantsOf(ref, client.files(repo, ref.commit))) {
                    // Header-only copies by commit: a repository opened again reads nothing twice.
                    v.headersDir = QDir(headersRoot).filePath(QString::fromStdString(exl::hub::repo_folder_name(repo))
                                                               + u'/' + v.commit + u'/' + v.folder);
                    try {
                        // A stamp marks a complete copy (a refused or cut read leaves a partial one).
                        const QString stamp = QDir(v.headersDir).filePath(QStringLiteral(".complete"));
                        if (!QFileInfo::exists(stamp)) {
                            QDir(v.headersDir).removeRecursively();
                            client.fetch_headers(repo, ref.commit, v.headersDir.toStdString(), v.folder.toStdString());
                            QFile(stamp).open(QIODevice::WriteOnly);
                        }
                        readConfig(v, QDir(v.headersDir).filePath(QStringLiteral("config.json")));
                    } catch (const exl::hub::HubError &e) {
                        v.error = errorMessage(e, repoId, client.config());
                    } catch (const std::exception &e) {
                        v.error = QString::fromStdString(e.what());
                    }
                    variants.append(v);
                }
            }
        } catch (const exl::hub::HubError &e) {
            error = errorMessage(e, repoId, client.config());
        } catch (const std::exception &e) {
            error = QString::fromStdString(e.what());
        }
        std::stable_sort(variants.begin(), variants.end(), [](const HubVariant &a, const HubVariant &b) {
            return a.bpw != b.bpw ? a.bpw < b.bpw : a.branch + a.folder < b.branch + b.folder;
        });
        QMetaObject::invokeMethod(this, [this, request, summary, variants, error] {
            applyVariants(request, summary, variants, error);
        }, Qt::QueuedConnection);
    });
}

void HubViewModel::applyVariants(quint64 request, const QVariantMap &summary, const QList<HubVariant> &variants,
                                 const QString &error)
{
    if (request != m_repoRequest)
        return;  // another repository was opened since
    m_repoLoading = false;
    if (!summary.isEmpty())
        m_repo = summary;
    m_repoError = error.isEmpty() && variants.isEmpty()
                      ? tr("No model in this repository: no branch or folder holds a config.json.")
                      : error;
    m_variants = variants;
    Q_EMIT repoChanged();
    Q_EMIT fitSettingsChanged();  // the context follows the variants' native context
    updateVariantList();
}

void HubViewModel::closeRepo()
{
    ++m_repoRequest;
    m_repoId.clear();
    m_repo.clear();
    m_repoLoading = false;
    m_repoError.clear();
    m_variants.clear();
    Q_EMIT repoChanged();
    updateVariantList();
}

void HubViewModel::updateVariantList()
{
    const exl::hub::HubConfig config = m_config();
    QVariantList list;
    for (const HubVariant &v : std::as_const(m_variants)) {
        QVariantMap fit{{QStringLiteral("available"), false}};
        if (v.error.isEmpty() && m_fit) {
            ModelInfo model;
            model.path = v.headersDir;
            model.name = m_repoId;
            model.bpw = v.bpw;
            model.nativeContext = v.nativeContext;
            fit = m_fit(model, contextLength(), m_cacheKind);
        }
        QString path;
        const bool downloaded = isDownloaded(config, m_repoId, v, &path);
        QString label = v.folder.isEmpty() ? v.branch : v.folder;
        if (!v.folder.isEmpty() && v.branch != QLatin1String("main"))
            label += QStringLiteral(" (%1)").arg(v.branch);
        list.append(QVariantMap{{QStringLiteral("branch"), v.branch},
                                {QStringLiteral("folder"), v.folder},
                                {QStringLiteral("label"), label},
                                {QStringLiteral("format"), v.format.toUpper()},
                                {QStringLiteral("bpw"), v.bpw},
                                {QStringLiteral("sizeBytes"), double(v.sizeBytes)},
                                {QStringLiteral("fit"), fit},
                                {QStringLiteral("error"), v.error},
                                {QStringLiteral("downloaded"), downloaded},
                                {QStringLiteral("path"), path}});
    }
    m_variantList = list;
    Q_EMIT variantsChanged();
}

int HubViewModel::maxContextLength() const
{
    int longest = 0;
    for (const HubVariant &v : m_variants)
        longest = std::max(longest, v.nativeContext);
    return longest > 0 ? longest : 131072;
}

void HubViewModel::refreshDownloaded()
{
    if (!m_variants.isEmpty())
        updateVariantList();
}

void HubViewModel::setContextLength(int tokens)
{
    tokens = std::clamp(tokens, 512, maxContextLength());
    if (tokens == contextLength())
        return;
    m_contextLength = tokens;
    Q_EMIT fitSettingsChanged();
    updateVariantList();
}

void HubViewModel::setCacheType(int type)
{
    if (type < int(CacheKind::Fp16) || type > int(CacheKind::Q4) || type == int(m_cacheKind))
        return;
    m_cacheKind = CacheKind(type);
    Q_EMIT fitSettingsChanged();
    updateVariantList();
}

void HubViewModel::downloadVariant(int index)
{
    if (index < 0 || index >= m_variants.size())
        return;
    const HubVariant &v = m_variants.at(index);
    m_download->start(m_repoId, v.branch, v.folder);
}
