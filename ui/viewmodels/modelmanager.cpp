#include "modelmanager.h"

#include <algorithm>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QUrl>
#include <qcoro/qcorosignal.h>

#include "services/inferenceservice.h"
#include "services/modelscanner.h"
#include "services/remoteendpoint.h"

namespace {
constexpr int kMinContext = 512;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Appends the models of `found` whose folder `list` does not hold yet, in order.
void appendNewModels(QList<ModelInfo> &list, const QList<ModelInfo> &found)
{
    for (const ModelInfo &f : found)
        if (std::none_of(list.begin(), list.end(), [&](const ModelInfo &m) { return m.path == f.path; }))
            list.append(f);
}
}  // namespace

ModelManager::ModelManager(InferenceService *service, std::unique_ptr<VramPlanner> planner, QObject *parent)
    : QAbstractListModel(parent)
    , m_service(service)
    , m_planner(std::move(planner))
    , m_models(service->availableModels())
{
    setScanner(std::make_unique<ModelScanner>());
    connect(service, &InferenceService::loadProgress, this, [this](double fraction) {
        m_loadProgress = fraction;
        Q_EMIT loadProgressChanged();
    });
    // (The service's models change without the disk's: no new scan.)
    connect(service, &InferenceService::availableModelsChanged, this, &ModelManager::applyModels);
    connect(service, &InferenceService::modelUnloaded, this, [this] {
        m_loaded.reset();
        m_loadNotice.clear();
        Q_EMIT loadedModelChanged();
        if (!m_models.isEmpty())
            Q_EMIT dataChanged(index(0), index(int(m_models.size()) - 1), {LoadedRole});
    });
    if (!m_models.isEmpty())
        setCurrentIndex(0);
    updateDraftChoices();
    updateFit();
}

ModelManager::~ModelManager() = default;

int ModelManager::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_models.size());
}

QVariant ModelManager::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const ModelInfo &m = m_models.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
    case NameRole: return m.name;
    case PathRole: return m.path;
    case ArchitectureRole: return m.architecture;
    case ParametersRole: return double(m.parameters);
    case BpwRole: return m.bpw;
    case HeadBitsRole: return m.headBits;
    case SizeRole: return double(m.sizeBytes);
    case NativeContextRole: return m.nativeContext;
    case LoadedRole: return m_loaded && m_loaded->path == m.path;
    case RemoteRole: return m.remote;
    case EndpointRole: return m.endpointName;
    // A remote model's note (plain HTTP) is worded now, in the current language.
    case NoteRole: return m.remote && !m.note.isEmpty() ? RemoteEndpointRules::noteFor(QUrl(m.path.section(u'#', 0, 0))) : m.note;
    default: return {};
    }
}

QHash<int, QByteArray> ModelManager::roleNames() const
{
    return {{NameRole, "name"}, {PathRole, "path"}, {ArchitectureRole, "architecture"},
            {ParametersRole, "parameters"}, {BpwRole, "bpw"}, {HeadBitsRole, "headBits"},
            {SizeRole, "sizeBytes"}, {NativeContextRole, "nativeContext"}, {LoadedRole, "loaded"},
            {RemoteRole, "remote"}, {EndpointRole, "endpoint"}, {NoteRole, "note"}};
}

void ModelManager::setCurrentIndex(int index)
{
    if (index < -1 || index >= m_models.size() || index == m_currentIndex)
        return;
    m_currentIndex = index;
    if (index >= 0) {
        m_bpw = m_models.at(index).bpw;
        m_options.contextLength = std::clamp(m_options.contextLength, kMinContext, maxContextLength());
    }
    Q_EMIT currentIndexChanged();
    Q_EMIT chatTemplateChanged();
    Q_EMIT settingsChanged();
    updateDraftChoices();
    updateFit();
}

void ModelManager::setBpw(double bpw)
{
    bpw = std::clamp(bpw, 2.0, 8.0);
    if (qFuzzyCompare(bpw, m_bpw))
        return;
    m_bpw = bpw;
    Q_EMIT settingsChanged();
    updateFit();
}

void ModelManager::setContextLength(int tokens)
{
    tokens = std::clamp(tokens, kMinContext, maxContextLength());
    if (tokens == m_options.contextLength)
        return;
    m_options.contextLength = tokens;
    Q_EMIT settingsChanged();
    updateFit();
}

int ModelManager::maxContextLength() const
{
    const int native = m_currentIndex >= 0 ? m_models.at(m_currentIndex).nativeContext : 0;
    return native > 0 ? native : 131072;
}

void ModelManager::setCacheType(int type)
{
    if (type < int(CacheKind::Fp16) || type > int(CacheKind::Q4) || type == cacheType())
        return;
    m_options.cacheKind = CacheKind(type);
    Q_EMIT settingsChanged();
    updateFit();
}

QStringList ModelManager::cacheTypeNames() const
{
    QStringList names;
    for (int i = int(CacheKind::Fp16); i <= int(CacheKind::Q4); ++i)
        names.append(cacheKindName(CacheKind(i)));
    return names;
}

void ModelManager::setGpuSplit(const QString &text)
{
    QString t = text.trimmed().toLower();
    t.remove(QLatin1Char(' '));
    QString error;
    if (!t.isEmpty() && t != QLatin1String("auto")) {
        const QStringList parts = t.split(QLatin1Char(','));
        for (const QString &p : parts) {
            bool ok = false;
            const double gib = p.toDouble(&ok);
            if (!ok || gib < 0 || gib > 1e6) {
                error = tr("\"%1\" is not a GPU split: leave it empty for one GPU, write auto, or give GiB per GPU "
                           "such as 20,23.").arg(text.trimmed());
                break;
            }
        }
    }
    if (error.isEmpty() && t == m_options.gpuSplit && m_gpuSplitError.isEmpty())
        return;
    m_gpuSplitError = error;
    if (error.isEmpty())
        m_options.gpuSplit = t;
    Q_EMIT settingsChanged();
    updateFit();
}

void ModelManager::setDraftTokens(int count)
{
    count = std::clamp(count, 0, kMaxDraftTokens);
    if (count == m_options.draftTokens)
        return;
    m_options.draftTokens = count;
    Q_EMIT settingsChanged();
    updateFit();
}

QString ModelManager::deviceName() const
{
    return m_service ? m_service->deviceName() : QString();
}

bool ModelManager::onCpu() const
{
    return m_service && m_service->onCpu();
}

QCoro::Task<bool> ModelManager::loadSelected()
{
    if (m_loading || m_currentIndex < 0 || !m_service)
        co_return false;
    QPointer<ModelManager> self(this);
    QPointer<InferenceService> service = m_service;
    setLoadError({});
    setLoading(true);
    service->loadModel(m_models.at(m_currentIndex).path, loadOptions());
    const LoadResult result = co_await qCoro(service.data(), &InferenceService::loadFinished);
    if (!self)
        co_return false;  // the page went away while the model was loading
    setLoading(false);
    if (!result.ok) {
        setLoadError(result.errorMessage);
        if (m_loaded) {  // a failed load leaves no model loaded
            m_loaded.reset();
            m_loadNotice.clear();
            Q_EMIT loadedModelChanged();
            Q_EMIT dataChanged(index(0), index(int(m_models.size()) - 1), {LoadedRole});
        }
        co_return false;
    }
    m_loaded = result.info;
    m_loadNotice = result.notice;
    Q_EMIT loadedModelChanged();
    Q_EMIT dataChanged(index(0), index(int(m_models.size()) - 1), {LoadedRole});
    co_return true;
}

void ModelManager::unload()
{
    if (m_service && m_loaded)
        m_service->unloadModel();
}

int ModelManager::indexOfPath(const QString &path) const
{
    const QString clean = QDir::cleanPath(path);
    const QString absolute = QDir::cleanPath(QFileInfo(path).absoluteFilePath());
    for (int i = 0; i < m_models.size(); ++i) {
        if (m_models.at(i).path == clean || m_models.at(i).path == absolute)
            return i;
    }
    return -1;
}

void ModelManager::setModelFolders(const QStringList &folders)
{
    if (folders == m_folders)
        return;
    m_folders = folders;
    Q_EMIT modelFoldersChanged();
    refresh();
}

QCoro::Task<bool> ModelManager::addModelFolder(const QString &pathOrUrl)
{
    const QUrl url(pathOrUrl);
    const QString path = QDir::cleanPath(QFileInfo(url.isLocalFile() ? url.toLocalFile() : pathOrUrl).absoluteFilePath());
    QPointer<ModelManager> self(this);
    ModelScanner *scanner = m_scanner.get();
    const quint64 request = scanner->scan({path});
    ModelScanResult result;
    do {  // (other scans may finish first)
        result = co_await qCoro(scanner, &ModelScanner::finished);
    } while (result.request != request);
    if (!self)
        co_return false;
    if (result.models.isEmpty()) {
        Q_EMIT folderRejected(pathOrUrl);
        co_return false;
    }
    if (!m_folders.contains(path)) {
        m_folders.append(path);
        Q_EMIT modelFoldersChanged();
        if (scanning()) {
            refresh();  // the scan under way does not know the new folder
        } else {
            // What a scan of all the folders would add: the new folder's models, last.
            appendNewModels(m_scanned, result.models);
            applyModels();
        }
    }
    Q_EMIT folderAdded(path);
    co_return true;
}

void ModelManager::refresh()
{
    const bool was = scanning();
    m_scanRequest = m_scanner->scan(m_folders);  // a scan under way is superseded
    if (!was)
        Q_EMIT scanningChanged();
}

QCoro::Task<> ModelManager::scanned()
{
    while (scanning())
        co_await qCoro(this, &ModelManager::scanningChanged);
}

void ModelManager::setScanner(std::unique_ptr<ModelScanner> scanner)
{
    m_scanner = std::move(scanner);  // (the old one's scans are stopped and dropped)
    connect(m_scanner.get(), &ModelScanner::finished, this, &ModelManager::onScanFinished);
    if (scanning())
        m_scanRequest = m_scanner->scan(m_folders);  // again, on the new one
}

void ModelManager::onScanFinished(const ModelScanResult &result)
{
    if (result.request != m_scanRequest)
        return;  // superseded, or one folder's scan for addModelFolder
    m_scanned = result.models;
    applyModels();
    m_scanRequest = 0;
    Q_EMIT scanningChanged();
}

void ModelManager::applyModels()
{
    const QString current = m_currentIndex >= 0 ? m_models.at(m_currentIndex).path : QString();
    QList<ModelInfo> models = m_service ? m_service->availableModels() : QList<ModelInfo>();
    appendNewModels(models, m_scanned);
    // This computer's models first, then the remote ones: the list shows them under two headings.
    std::stable_partition(models.begin(), models.end(), [](const ModelInfo &m) { return !m.remote; });
    beginResetModel();
    m_models = models;
    m_currentIndex = -1;
    endResetModel();
    const int keep = indexOfPath(current);
    if (keep >= 0 || !m_models.isEmpty())
        setCurrentIndex(keep >= 0 ? keep : 0);
    else
        Q_EMIT currentIndexChanged();
    updateDraftChoices();
    updateFit();
}

void ModelManager::updateFit()
{
    VramPlan plan;
    if (m_currentIndex >= 0 && !currentIsRemote())
    {
        const int draft = draftModelIndex();
        plan = m_planner->plan({m_models.at(m_currentIndex), m_bpw, m_options.contextLength, m_options.cacheKind,
                                m_options.draftTokens, draft >= 0 ? m_draftChoices.at(draft) : ModelInfo{},
                                m_options.gpuSplit});
    }
    const QVariantMap fit = fitMap(plan, m_options.contextLength, m_options.draftTokens);
    if (fit != m_fit) {
        m_fit = fit;
        Q_EMIT fitChanged();
    }
}

QVariantMap ModelManager::fitFor(const ModelInfo &model, int contextLength, CacheKind cache) const
{
    const VramPlan plan = m_planner->plan({model, 0.0, contextLength, cache, 0, ModelInfo{}, m_options.gpuSplit});
    return fitMap(plan, contextLength, 0);
}

QVariantMap ModelManager::fitMap(const VramPlan &plan, int contextLength, int draftTokens)
{
    QVariantMap fit;
    fit.insert(QStringLiteral("available"), plan.available);
    if (plan.available) {
        const qint64 used = plan.weightsBytes + plan.cacheBytes + plan.scratchBytes + plan.draftBytes;
        fit.insert(QStringLiteral("weightsGiB"), plan.weightsBytes / kGiB);
        fit.insert(QStringLiteral("cacheGiB"), plan.cacheBytes / kGiB);
        fit.insert(QStringLiteral("scratchGiB"), plan.scratchBytes / kGiB);
        fit.insert(QStringLiteral("draftGiB"), plan.draftBytes / kGiB);
        fit.insert(QStringLiteral("usedBytes"), double(used));
        fit.insert(QStringLiteral("usedGiB"), used / kGiB);
        fit.insert(QStringLiteral("deviceGiB"), plan.deviceBytes / kGiB);
        fit.insert(QStringLiteral("freeGiB"), std::max<qint64>(0, plan.deviceBytes - used) / kGiB);
        fit.insert(QStringLiteral("fits"), plan.fits);
        fit.insert(QStringLiteral("largestContext"), plan.largestContextThatFits);
        fit.insert(QStringLiteral("boundTokensPerSecond"), plan.boundTokensPerSecond);
        fit.insert(QStringLiteral("boundEmptyTokensPerSecond"), plan.boundEmptyTokensPerSecond);
        fit.insert(QStringLiteral("contextLength"), contextLength);
        // (Only while tokens are drafted: with the slider at 0 the draft model sits idle.)
        fit.insert(QStringLiteral("speculativeTokensPerSecond"),
                   draftTokens > 0 ? plan.speculativeTokensPerSecond : 0.0);
        fit.insert(QStringLiteral("speculativeAcceptance"), plan.speculativeAcceptance);
        fit.insert(QStringLiteral("target"), plan.target);
        QVariantList devices;  // a split: where the layers go
        for (const VramPlanDevice &d : plan.devices)
            devices.append(QVariantMap{{QStringLiteral("index"), d.index},
                                       {QStringLiteral("name"), d.name},
                                       {QStringLiteral("firstLayer"), d.firstLayer},
                                       {QStringLiteral("lastLayer"), d.lastLayer},
                                       {QStringLiteral("head"), d.head},
                                       {QStringLiteral("draft"), d.draft},
                                       {QStringLiteral("usedGiB"), d.usedBytes / kGiB},
                                       {QStringLiteral("totalGiB"), d.totalBytes / kGiB},
                                       {QStringLiteral("fits"), d.usedBytes <= d.totalBytes}});
        fit.insert(QStringLiteral("devices"), devices);
    }
    return fit;
}

void ModelManager::setLoading(bool loading)
{
    if (loading == m_loading)
        return;
    m_loading = loading;
    m_loadProgress = 0.0;
    Q_EMIT loadingChanged();
    Q_EMIT loadProgressChanged();
}

LoadOptions ModelManager::loadOptions() const
{
    LoadOptions options = m_options;
    options.chatTemplate = chatTemplateOverride();
    options.draftModelPath = draftModelPath();
    return options;
}

void ModelManager::updateDraftChoices()
{
    QList<ModelInfo> choices;
    if (m_currentIndex >= 0 && !currentIsRemote()) {
        const ModelInfo &target = m_models.at(m_currentIndex);
        // Equal vocabulary digests: the vocabularies the engine's check accepts at load.
        for (const ModelInfo &m : std::as_const(m_models))
            if (!m.remote && m.path != target.path && !target.vocabulary.isEmpty() && m.vocabulary == target.vocabulary)
                choices.append(m);
        std::stable_sort(choices.begin(), choices.end(), [](const ModelInfo &a, const ModelInfo &b) {
            return a.sizeBytes != b.sizeBytes ? a.sizeBytes < b.sizeBytes : a.name < b.name;
        });
    }
    m_draftChoices = choices;
    Q_EMIT draftModelsChanged();  // (the chosen one depends on the selected model too)
}

QStringList ModelManager::draftModelNames() const
{
    QStringList names;
    for (const ModelInfo &m : m_draftChoices)
        names.append(m.name);
    return names;
}

QStringList ModelManager::draftModelPaths() const
{
    QStringList out;
    for (const ModelInfo &m : m_draftChoices)
        out.append(m.path);
    return out;
}

int ModelManager::draftModelIndex() const
{
    if (m_currentIndex < 0)
        return -1;
    const QString chosen = m_draftModels.value(m_models.at(m_currentIndex).path);
    if (chosen.isEmpty())
        return -1;
    for (int i = 0; i < m_draftChoices.size(); ++i)
        if (m_draftChoices.at(i).path == chosen)
            return i;
    return -1;  // chosen once, not offered now (gone from disk, or its vocabulary changed)
}

void ModelManager::setDraftModelIndex(int index)
{
    if (m_currentIndex < 0 || index < -1 || index >= m_draftChoices.size() || index == draftModelIndex())
        return;
    const QString model = m_models.at(m_currentIndex).path;
    const QString draft = index >= 0 ? m_draftChoices.at(index).path : QString();
    if (draft.isEmpty())
        m_draftModels.remove(model);
    else
        m_draftModels.insert(model, draft);
    Q_EMIT draftModelsChanged();
    Q_EMIT draftModelEdited(model, draft);
    updateFit();
}

QString ModelManager::draftModelName() const
{
    const int i = draftModelIndex();
    return i >= 0 ? m_draftChoices.at(i).name : QString();
}

QString ModelManager::draftModelPath() const
{
    const int i = draftModelIndex();
    return i >= 0 ? m_draftChoices.at(i).path : QString();
}

bool ModelManager::setDraftModelPath(const QString &path)
{
    if (path.isEmpty()) {
        setDraftModelIndex(-1);
        return true;
    }
    const QStringList offered = draftModelPaths();
    int i = offered.indexOf(QDir::cleanPath(path));
    if (i < 0)
        i = offered.indexOf(QDir::cleanPath(QFileInfo(path).absoluteFilePath()));
    if (i < 0)
        return false;
    setDraftModelIndex(i);
    return true;
}

void ModelManager::setDraftModels(const QHash<QString, QString> &choices)
{
    m_draftModels = choices;
    Q_EMIT draftModelsChanged();
    updateFit();
}

QString ModelManager::chatTemplateOverride() const
{
    return m_currentIndex >= 0 ? m_chatTemplates.value(m_models.at(m_currentIndex).path) : QString();
}

void ModelManager::setChatTemplateOverride(const QString &text)
{
    if (m_currentIndex < 0 || text == chatTemplateOverride())
        return;
    const QString path = m_models.at(m_currentIndex).path;
    if (text.isEmpty())
        m_chatTemplates.remove(path);
    else
        m_chatTemplates.insert(path, text);
    Q_EMIT chatTemplateChanged();
    Q_EMIT chatTemplateOverrideEdited(path, text);
}

QString ModelManager::modelChatTemplate() const
{
    if (m_currentIndex < 0)
        return {};  // (a remote model has no folder: no file, no template)
    QFile file(QDir(m_models.at(m_currentIndex).path).filePath(QStringLiteral("tokenizer_config.json")));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    const QJsonValue tpl = QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("chat_template"));
    if (tpl.isString())
        return tpl.toString();
    // A list of named templates: "default", else the first (as the engine picks).
    const QJsonArray named = tpl.toArray();
    for (const QJsonValue &entry : named)
        if (entry.toObject().value(QStringLiteral("name")).toString() == QLatin1String("default"))
            return entry.toObject().value(QStringLiteral("template")).toString();
    return named.isEmpty() ? QString() : named.first().toObject().value(QStringLiteral("template")).toString();
}

bool ModelManager::loadChatTemplateFile(const QString &pathOrUrl)
{
    const QUrl url(pathOrUrl);
    QFile file(url.isLocalFile() ? url.toLocalFile() : pathOrUrl);
    if (m_currentIndex < 0 || !file.open(QIODevice::ReadOnly)) {
        setLoadError(tr("Could not read the chat template file %1.").arg(file.fileName()));
        return false;
    }
    setChatTemplateOverride(QString::fromUtf8(file.readAll()));
    return true;
}

void ModelManager::setChatTemplateOverrides(const QHash<QString, QString> &overrides)
{
    m_chatTemplates = overrides;
    Q_EMIT chatTemplateChanged();
}

void ModelManager::setLoadError(const QString &message)
{
    if (message == m_loadError)
        return;
    m_loadError = message;
    Q_EMIT loadErrorChanged();
}
