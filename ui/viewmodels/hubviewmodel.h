// The Models page's Hugging Face tab: search the Hub (text, EXL2/EXL3/all, sorted by downloads or
// recency), a repository's variants (each branch, or each subfolder holding a model, with its bpw,
// its size and the planner's fit on this machine at the tab's context length and cache type, from
// config.json and the safetensors headers read over the Hub without the weights), and the download
// of one variant (HubDownload).
//
// The Hub is spoken by the engine's exl::hub::HubClient (the protocol and the cache written once);
// its calls block, so they run on this model's worker pool and their results come back to the GUI
// thread as values. A newer request makes an older one's result stale (dropped).
#pragma once
#include <QObject>
#include <QTemporaryDir>
#include <QThreadPool>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>
#include <algorithm>
#include <functional>
#include <memory>

#include "exl/hub.h"
#include "services/inferencetypes.h"

class HubDownload;

// Where the Hub is and who asks (endpoint, token, cache, offline), read anew for each request so a
// token saved in Settings counts at once.
using HubConfigSource = std::function<exl::hub::HubConfig()>;
// The fit bar's map (ModelManager::fitFor) of a model folder at a context length and cache type.
using HubFitSource = std::function<QVariantMap(const ModelInfo &model, int contextLength, CacheKind cache)>;

// One variant of a repository as the worker found it (a value crossing to the GUI thread).
struct HubVariant {
    QString branch;
    QString commit;
    QString folder;       // subfolder holding the model; empty: the top level
    QString format;       // quant_method of quantization_config ("exl2", "exl3"), else "fp16"/"bf16"...
    double bpw = 0.0;
    qint64 sizeBytes = 0;
    int nativeContext = 0;
    QString headersDir;   // config.json and header-only safetensors, for the planner
    QStringList files;    // paths in the revision
    QString error;        // why its headers could not be read (no fit then)
};

class HubViewModel : public QObject
{
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("Created by the application")
    Q_PROPERTY(QString query READ query WRITE setQuery NOTIFY searchSettingsChanged)
    Q_PROPERTY(int formatFilter READ formatFilter WRITE setFormatFilter NOTIFY searchSettingsChanged)  // 0 all, 1 EXL2, 2 EXL3
    Q_PROPERTY(int sortOrder READ sortOrder WRITE setSortOrder NOTIFY searchSettingsChanged)           // 0 downloads, 1 recent
    Q_PROPERTY(bool searching READ searching NOTIFY searchStateChanged)
    Q_PROPERTY(bool searched READ searched NOTIFY searchStateChanged)
    Q_PROPERTY(QString searchError READ searchError NOTIFY searchStateChanged)
    Q_PROPERTY(QVariantList results READ results NOTIFY searchStateChanged)
    Q_PROPERTY(QString repoId READ repoId NOTIFY repoChanged)
    Q_PROPERTY(QVariantMap repo READ repo NOTIFY repoChanged)  // the repository's summary (downloads, likes...)
    Q_PROPERTY(bool repoLoading READ repoLoading NOTIFY repoChanged)
    Q_PROPERTY(QString repoError READ repoError NOTIFY repoChanged)
    Q_PROPERTY(QVariantList variants READ variants NOTIFY variantsChanged)
    Q_PROPERTY(int contextLength READ contextLength WRITE setContextLength NOTIFY fitSettingsChanged)
    Q_PROPERTY(int cacheType READ cacheType WRITE setCacheType NOTIFY fitSettingsChanged)
    // The context slider's end: the longest native context of the variants (131072 when unknown).
    Q_PROPERTY(int maxContextLength READ maxContextLength NOTIFY variantsChanged)
    Q_PROPERTY(HubDownload *download READ download CONSTANT)
    Q_PROPERTY(QString endpoint READ endpoint NOTIFY searchStateChanged)
    Q_PROPERTY(bool offline READ offline NOTIFY searchStateChanged)
public:
    HubViewModel(HubConfigSource config, std::shared_ptr<exl::hub::Transport> transport, HubFitSource fit,
                 HubDownload *download, QObject *parent = nullptr);
    ~HubViewModel() override;  // waits for the requests under way

    // What the user is told about a failed Hub request: the engine's error, worded for the app (a
    // token is set in Settings here, not through HF_TOKEN). `repo`: the repository asked for (may be empty).
    static QString errorMessage(const exl::hub::HubError &error, const QString &repo, const exl::hub::HubConfig &config);

    QString query() const { return m_query; }
    void setQuery(const QString &text);
    int formatFilter() const { return m_formatFilter; }
    void setFormatFilter(int filter);
    int sortOrder() const { return m_sortOrder; }
    void setSortOrder(int order);
    bool searching() const { return m_searching; }
    bool searched() const { return m_searched; }
    QString searchError() const { return m_searchError; }
    QVariantList results() const { return m_results; }

    QString repoId() const { return m_repoId; }
    QVariantMap repo() const { return m_repo; }
    bool repoLoading() const { return m_repoLoading; }
    QString repoError() const { return m_repoError; }
    // Each variant: branch, folder, label, format, bpw, sizeBytes, fit (the fit bar's map),
    // downloaded (the whole variant is in the cache), path (its folder there, when downloaded).
    QVariantList variants() const { return m_variantList; }
    // The context the fits assume: the one chosen, at most the variants' native context.
    int contextLength() const { return std::min(m_contextLength, maxContextLength()); }
    void setContextLength(int tokens);
    int cacheType() const { return int(m_cacheKind); }
    int maxContextLength() const;
    void setCacheType(int type);
    HubDownload *download() const { return m_download; }
    QString endpoint() const;
    bool offline() const;

    // Runs the search with the current text, filter and order.
    Q_INVOKABLE void search();
    // Opens a repository's page (ORG/NAME): its variants, their sizes and fits.
    Q_INVOKABLE void openRepo(const QString &repoId);
    Q_INVOKABLE void closeRepo();
    // Downloads variant `index` of the open repository.
    Q_INVOKABLE void downloadVariant(int index);
    // Looks at the cache again (a download finished): which variants are downloaded.
    Q_INVOKABLE void refreshDownloaded();

Q_SIGNALS:
    void searchSettingsChanged();
    void searchStateChanged();
    void repoChanged();
    void variantsChanged();
    void fitSettingsChanged();

private:
    exl::hub::HubClient client() const;
    void applyVariants(quint64 request, const QVariantMap &summary, const QList<HubVariant> &variants,
                       const QString &error);
    void updateVariantList();

    HubConfigSource m_config;
    std::shared_ptr<exl::hub::Transport> m_transport;
    HubFitSource m_fit;
    HubDownload *m_download;
    QThreadPool m_pool;
    QTemporaryDir m_headers;  // header-only copies of the variants, for the planner

    QString m_query;
    int m_formatFilter = 2;  // EXL3 first: the format new quantizations on the Hub are published in
    int m_sortOrder = 0;
    bool m_searching = false;
    bool m_searched = false;
    QString m_searchError;
    QVariantList m_results;
    quint64 m_searchRequest = 0;

    QString m_repoId;
    QVariantMap m_repo;
    bool m_repoLoading = false;
    QString m_repoError;
    quint64 m_repoRequest = 0;
    QList<HubVariant> m_variants;
    QVariantList m_variantList;
    int m_contextLength = 4096;
    CacheKind m_cacheKind = CacheKind::Fp16;
};
