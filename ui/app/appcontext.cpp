#include "appcontext.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QLibraryInfo>
#include <QLocale>
#include <QQmlEngine>
#include <QStandardPaths>

#include "services/combinedinferenceservice.h"
#include "services/enginegenerationbackend.h"
#include "services/enginevramplanner.h"
#include "services/fakeinferenceservice.h"
#include "services/modelscanner.h"
#include "services/qthubtransport.h"

AppContext::AppContext(const AppOptions &options, std::unique_ptr<InferenceService> service,
                       std::unique_ptr<VramPlanner> planner, bool simulated, QObject *parent)
    : QObject(parent)
    , m_options(options)
    , m_simulated(simulated)
    , m_service(std::move(service))
{
    const QString dataDir = options.dataDir.isEmpty() ? defaultDataDir() : options.dataDir;
    m_dataDir = dataDir;
    QDir().mkpath(dataDir);
    if (!m_store.open(QDir(dataDir).filePath(QStringLiteral("chats.sqlite"))))
        m_storageError = m_store.lastError();

    m_settings = std::make_unique<SettingsViewModel>(QDir(dataDir).filePath(QStringLiteral("settings.ini")));
    // The command line's choices hold for this run; the saved ones stay for the next.
    if (!options.theme.isEmpty())
        m_settings->overrideTheme(options.theme);
    if (!options.language.isEmpty())
        m_settings->overrideLanguage(options.language);

    m_chat = std::make_unique<ChatViewModel>(m_service.get(), &m_store);

    // The chat open when the app closed is open again; each chat opened is remembered.
    if (m_settings->lastConversation() != 0 && m_store.conversation(m_settings->lastConversation()).id != 0)
        m_chat->openConversation(m_settings->lastConversation());
    connect(m_chat.get(), &ChatViewModel::conversationChanged, m_settings.get(),
            [this] { m_settings->setLastConversation(m_chat->conversationId()); });

    m_conversations = std::make_unique<ConversationListModel>(&m_store);
    connect(m_chat.get(), &ChatViewModel::conversationStored, m_conversations.get(), &ConversationListModel::refresh);
    connect(m_chat.get(), &ChatViewModel::replyFinished, m_conversations.get(), &ConversationListModel::refresh);
    connect(m_conversations.get(), &ConversationListModel::removed, this, [this](qint64 id) {
        if (m_chat->conversationId() == id)
            m_chat->openConversation(0);
    });

    if (auto *combined = qobject_cast<CombinedInferenceService *>(m_service.get()))
        m_remotes = std::make_unique<RemoteEndpointsModel>(
            combined->remote(), QDir(dataDir).filePath(QStringLiteral("remote-endpoints.json")));
    m_models = std::make_unique<ModelManager>(m_service.get(), std::move(planner));
    // The draft-token count is kept in the settings: restored here, saved when a slider moves.
    m_models->setDraftTokens(m_settings->draftTokens());
    connect(m_models.get(), &ModelManager::settingsChanged, m_settings.get(),
            [this] { m_settings->setDraftTokens(m_models->draftTokens()); });
    connect(m_settings.get(), &SettingsViewModel::draftTokensChanged, this,
            [this] { m_models->setDraftTokens(m_settings->draftTokens()); });
    // Each request samples with the settings and drafts as many tokens as the models page's
    // slider says now (no reload needed).
    const auto applySampling = [this] {
        SamplingSettings sampling = m_settings->sampling();
        sampling.draftTokens = m_models->draftTokens();
        m_chat->setSampling(sampling);
    };
    applySampling();
    connect(m_settings.get(), &SettingsViewModel::samplingChanged, this, applySampling);
    connect(m_models.get(), &ModelManager::settingsChanged, this, applySampling);
    m_models->setMaxChunkSize(m_settings->maxChunkSize());
    connect(m_settings.get(), &SettingsViewModel::maxChunkSizeChanged, this,
            [this] { m_models->setMaxChunkSize(m_settings->maxChunkSize()); });
    // Per-model chat template overrides live in the settings; the models page edits them.
    m_models->setChatTemplateOverrides(m_settings->chatTemplateOverrides());
    connect(m_models.get(), &ModelManager::chatTemplateOverrideEdited, m_settings.get(),
            &SettingsViewModel::setChatTemplateOverride);
    // So do the draft models chosen per model.
    m_models->setDraftModels(m_settings->draftModels());
    connect(m_models.get(), &ModelManager::draftModelEdited, m_settings.get(), &SettingsViewModel::setDraftModel);
    if (!m_simulated) {
        m_models->setModelFolders(modelFolders());
        connect(m_settings.get(), &SettingsViewModel::modelFoldersChanged, this,
                [this] { m_models->setModelFolders(modelFolders()); });
        connect(m_models.get(), &ModelManager::folderAdded, m_settings.get(), &SettingsViewModel::addModelFolder);
    }
    // The Hugging Face tab: the engine's Hub client over Qt Network, the fit from this machine's planner.
    m_hubDownload = std::make_unique<HubDownload>([this] { return hubConfig(); }, std::make_shared<QtHubTransport>());
    m_hubDownload->setPending(m_settings->hubPendingDownload());
    connect(m_hubDownload.get(), &HubDownload::pendingChanged, m_settings.get(), &SettingsViewModel::setHubPendingDownload);
    connect(m_hubDownload.get(), &HubDownload::finished, this, [this](const QString &path) { selectDownloaded(path); });
    m_hub = std::make_unique<HubViewModel>(
        [this] { return hubConfig(); }, std::make_shared<QtHubTransport>(),
        [this](const ModelInfo &model, int context, CacheKind cache) { return m_models->fitFor(model, context, cache); },
        m_hubDownload.get());
    m_hub->setContextLength(m_models->contextLength());
    m_telemetry = std::make_unique<TelemetryModel>();
    connect(m_service.get(), &InferenceService::telemetry, m_telemetry.get(), &TelemetryModel::addSample);
    connect(m_settings.get(), &SettingsViewModel::languageChanged, this, &AppContext::applyLanguage);
}

AppContext::~AppContext()
{
    // The view models go before the service whose signals they follow; a download stops first.
    m_hub.reset();
    m_hubDownload.reset();
    m_chat.reset();
    m_models.reset();
    m_remotes.reset();
    if (!m_translator.isEmpty())
        QCoreApplication::removeTranslator(&m_translator);
    if (!m_qtTranslator.isEmpty())
        QCoreApplication::removeTranslator(&m_qtTranslator);
}

std::unique_ptr<AppContext> AppContext::createDefault(const AppOptions &options)
{
    if (options.fake)
        return createSimulated(options);
    const QString device = options.device.isEmpty() ? QStringLiteral("auto") : options.device;
    // The fit calculator plans for the device the engine runs on (the engine's planner).
    auto service = std::make_unique<CombinedInferenceService>(
        std::make_unique<WorkerInferenceService>(std::make_unique<EngineGenerationBackend>(device)),
        std::make_unique<RemoteInferenceService>());
    return std::make_unique<AppContext>(options, std::move(service), EngineVramPlanner::forDevice(device), false);
}

std::unique_ptr<AppContext> AppContext::createSimulated(const AppOptions &options)
{
    const QString device = options.device.isEmpty() ? QStringLiteral("cuda:0") : options.device;
    constexpr qint64 kGiB = 1024LL * 1024 * 1024;
    const bool cpu = device == QLatin1String("cpu");
    auto planner = std::make_unique<FakeVramPlanner>(cpu ? 64 * kGiB : 24 * kGiB, cpu ? 60e9 : 936e9);
    auto service = std::make_unique<CombinedInferenceService>(std::make_unique<FakeInferenceService>(device),
                                                              std::make_unique<RemoteInferenceService>());
    return std::make_unique<AppContext>(options, std::move(service), std::move(planner), true);
}

QString AppContext::defaultDataDir()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
}

QString AppContext::deviceName() const
{
    return m_service->deviceName();
}

bool AppContext::onCpu() const
{
    return m_service->onCpu();
}

QString AppContext::deviceNote() const
{
    // The backend words its note when it is made, before the translator is installed: translate
    // it here (a note with no translation, e.g. the engine's own message, is shown as it is).
    return QCoreApplication::translate("EngineGenerationBackend", m_service->deviceNote().toUtf8().constData());
}

QStringList AppContext::modelFolders() const
{
    QStringList folders;
    const QString dir = m_settings->modelsDirectory();
    folders.append(dir.isEmpty() ? defaultModelsDirectory() : dir);
    folders.append(m_settings->modelFolders());
    folders.append(otherModelFolders());
    folders.removeDuplicates();
    return folders;
}

QString AppContext::defaultModelsDirectory() const
{
    return QDir(m_dataDir).filePath(QStringLiteral("models"));
}

exl::hub::HubConfig AppContext::hubConfig() const
{
    exl::hub::HubConfig config = exl::hub::HubConfig::from_environment();
    if (!m_settings->hubToken().isEmpty())
        config.token = m_settings->hubToken().toStdString();
    return config;
}

QCoro::Task<> AppContext::selectDownloaded(QString path)
{
    QPointer<AppContext> self(this);
    m_models->refresh();
    co_await m_models->scanned();
    if (!self)
        co_return;
    const int index = m_models->indexOfPath(path);
    if (index >= 0)
        m_models->setCurrentIndex(index);
}

QStringList AppContext::otherModelFolders() const
{
    QStringList folders = fixtureModelRoots();
    // The Hugging Face cache: models fetched here, by `exl pull` or by huggingface_hub.
    folders.append(QString::fromStdString(exl::hub::HubConfig::from_environment().cache_dir.string()));
    folders.append(m_runFolders);
    folders.removeDuplicates();
    return folders;
}

QString AppContext::version() const
{
    return QCoreApplication::applicationVersion();
}

void AppContext::attach(QQmlEngine *engine)
{
    m_engine = engine;
    applyLanguage();
}

void AppContext::applyLanguage()
{
    QCoreApplication::removeTranslator(&m_translator);
    const QString language = m_settings->language();
    // Numbers and dates as the interface language writes them (Qt.locale() in QML, QLocale()).
    QLocale::setDefault(QLocale(language == QLatin1String("nl")   ? QLocale::Dutch
                                : language == QLatin1String("de") ? QLocale::German
                                                                  : QLocale::English));
    if (language != QLatin1String("en")
        && m_translator.load(QStringLiteral(":/i18n/exl-studio_%1.qm").arg(language)))
        QCoreApplication::installTranslator(&m_translator);
    // Qt's own messages (network errors, the file dialogs) where its translations are installed
    // (Debian's qt6-translations-l10n).
    QCoreApplication::removeTranslator(&m_qtTranslator);
    if (language != QLatin1String("en")
        && m_qtTranslator.load(QStringLiteral("qtbase_%1").arg(language), QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
        QCoreApplication::installTranslator(&m_qtTranslator);
    if (m_engine)
        m_engine->retranslate();
    if (m_models)
        m_models->retranslate();
    if (m_remotes)
        m_remotes->retranslate();
}

QCoro::Task<> AppContext::start()
{
    QPointer<AppContext> self(this);
    // The Hugging Face tab asked for: a search, and a repository's page.
    if (m_options.page == QLatin1String("hub")) {
        m_hub->search();
        if (!m_options.hubRepo.isEmpty())
            m_hub->openRepo(m_options.hubRepo);
    }
    if (!m_options.modelPath.isEmpty()) {
        co_await m_models->scanned();  // the model folders, scanned off the GUI thread
        if (!self)
            co_return;
        int index = m_models->indexOfPath(m_options.modelPath);
        if (index < 0 && !m_simulated) {
            // A folder given on the command line is listed for this run (not remembered), and
            // stays listed when the settings' folders change.
            m_runFolders.append(QDir::cleanPath(QFileInfo(m_options.modelPath).absoluteFilePath()));
            Q_EMIT otherModelFoldersChanged();
            m_models->setModelFolders(modelFolders());
            co_await m_models->scanned();
            if (!self)
                co_return;
            index = m_models->indexOfPath(m_options.modelPath);
        }
        if (index < 0) {
            qWarning("exl-studio: no model folder at %s", qPrintable(m_options.modelPath));
            m_models->reportLoadError(tr("No model folder at %1 (from --model): it needs a config.json and the model's weights.")
                                          .arg(m_options.modelPath));
            Q_EMIT pageRequested(QStringLiteral("models"));
            co_return;
        }
        m_models->setCurrentIndex(index);
        const bool loaded = co_await m_models->loadSelected();
        if (!self || !loaded)
            co_return;
    }
    if (!m_options.demoPrompt.isEmpty())
        m_chat->send(m_options.demoPrompt);
}
