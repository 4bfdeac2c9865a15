#include "settingsviewmodel.h"

#include <QDir>
#include <QUrl>

namespace {
const QStringList kThemes{QStringLiteral("light"), QStringLiteral("dark"), QStringLiteral("system")};
const QStringList kLanguages{QStringLiteral("en"), QStringLiteral("nl"), QStringLiteral("de")};

SamplingSettings preset(const QString &name)
{
    SamplingSettings s;
    if (name == QLatin1String("precise")) {
        s.temperature = 0.2;
        s.topK = 20;
        s.topP = 0.8;
        s.minP = 0.1;
    } else if (name == QLatin1String("creative")) {
        s.temperature = 1.1;
        s.topK = 100;
        s.topP = 0.97;
        s.minP = 0.02;
        s.repetitionPenalty = 1.0;
    }
    return s;
}
}  // namespace

SettingsViewModel::SettingsViewModel(const QString &filePath, QObject *parent)
    : QObject(parent)
{
    if (filePath.isEmpty())
        return;
    m_settings = std::make_unique<QSettings>(filePath, QSettings::IniFormat);
    QSettings &s = *m_settings;
    m_sampling.temperature = std::clamp(s.value("sampling/temperature", m_sampling.temperature).toDouble(), 0.0, 2.0);
    m_sampling.topK = std::clamp(s.value("sampling/topK", m_sampling.topK).toInt(), 0, 1000);
    m_sampling.topP = std::clamp(s.value("sampling/topP", m_sampling.topP).toDouble(), 0.0, 1.0);
    m_sampling.minP = std::clamp(s.value("sampling/minP", m_sampling.minP).toDouble(), 0.0, 1.0);
    m_sampling.repetitionPenalty = std::clamp(s.value("sampling/repetitionPenalty", m_sampling.repetitionPenalty).toDouble(), 1.0, 2.0);
    m_sampling.seed = s.value("sampling/seed", m_sampling.seed).toInt();
    m_sampling.maxNewTokens = std::clamp(s.value("sampling/maxNewTokens", m_sampling.maxNewTokens).toInt(), 0, kMaxNewTokensLimit);
    m_lastConversation = s.value("chat/lastConversation", 0).toLongLong();
    m_maxChunkSize = std::clamp(s.value("engine/maxChunkSize", m_maxChunkSize).toInt(), 64, 8192);
    m_draftTokens = std::clamp(s.value("engine/draftTokens", m_draftTokens).toInt(), 0, kMaxDraftTokens);
    const QString theme = s.value("ui/theme", m_theme).toString();
    m_theme = kThemes.contains(theme) ? theme : m_theme;
    m_savedTheme = m_theme;
    const QString language = s.value("ui/language", m_language).toString();
    m_language = kLanguages.contains(language) ? language : m_language;
    m_savedLanguage = m_language;
    m_fontSize = std::clamp(s.value("ui/fontSize", m_fontSize).toInt(), 8, 24);
    m_tintDraftTokens = s.value("ui/tintDraftTokens", m_tintDraftTokens).toBool();
    m_modelsDirectory = s.value("models/directory").toString();
    m_modelFolders = s.value("models/folders").toStringList();
    m_hubToken = s.value("hub/token").toString().trimmed();
    m_hubPendingDownload = s.value("hub/pendingDownload").toMap();
    const QVariantMap templates = s.value("models/chatTemplates").toMap();
    for (auto it = templates.cbegin(); it != templates.cend(); ++it)
        if (!it.value().toString().isEmpty())
            m_chatTemplates.insert(it.key(), it.value().toString());
    const QVariantMap drafts = s.value("models/draftModels").toMap();
    for (auto it = drafts.cbegin(); it != drafts.cend(); ++it)
        if (!it.value().toString().isEmpty())
            m_draftModels.insert(it.key(), it.value().toString());
}

QString SettingsViewModel::draftModel(const QString &modelPath) const
{
    return m_draftModels.value(modelPath);
}

void SettingsViewModel::setDraftModel(const QString &modelPath, const QString &draftPath)
{
    if (modelPath.isEmpty() || m_draftModels.value(modelPath) == draftPath)
        return;
    if (draftPath.isEmpty())
        m_draftModels.remove(modelPath);
    else
        m_draftModels.insert(modelPath, draftPath);
    save();
    Q_EMIT draftModelsChanged();
}

QString SettingsViewModel::chatTemplateOverride(const QString &modelPath) const
{
    return m_chatTemplates.value(modelPath);
}

void SettingsViewModel::setChatTemplateOverride(const QString &modelPath, const QString &text)
{
    if (modelPath.isEmpty() || m_chatTemplates.value(modelPath) == text)
        return;
    if (text.isEmpty())
        m_chatTemplates.remove(modelPath);
    else
        m_chatTemplates.insert(modelPath, text);
    save();
    Q_EMIT chatTemplatesChanged();
}

namespace {
// A folder as a plain path: file:// URLs (from folder dialogs and drops) become local paths.
QString folderPath(const QString &pathOrUrl)
{
    const QUrl url(pathOrUrl);
    return url.isLocalFile() ? url.toLocalFile() : pathOrUrl;
}
}  // namespace

void SettingsViewModel::setModelsDirectory(const QString &pathOrUrl)
{
    const QString dir = folderPath(pathOrUrl);
    const QString clean = dir.isEmpty() ? QString() : QDir::cleanPath(dir);
    if (clean == m_modelsDirectory)
        return;
    m_modelsDirectory = clean;
    save();
    Q_EMIT modelFoldersChanged();
}

void SettingsViewModel::addModelFolder(const QString &pathOrUrl)
{
    const QString dir = folderPath(pathOrUrl);
    const QString clean = QDir::cleanPath(dir);
    if (dir.isEmpty() || m_modelFolders.contains(clean))
        return;
    m_modelFolders.append(clean);
    save();
    Q_EMIT modelFoldersChanged();
}

void SettingsViewModel::removeModelFolder(const QString &dir)
{
    if (m_modelFolders.removeAll(QDir::cleanPath(dir)) == 0)
        return;
    save();
    Q_EMIT modelFoldersChanged();
}

void SettingsViewModel::setTemperature(double value)
{
    editSampling([&](SamplingSettings &s) { s.temperature = std::clamp(value, 0.0, 2.0); });
}

void SettingsViewModel::setTopK(int value)
{
    editSampling([&](SamplingSettings &s) { s.topK = std::clamp(value, 0, 1000); });
}

void SettingsViewModel::setTopP(double value)
{
    editSampling([&](SamplingSettings &s) { s.topP = std::clamp(value, 0.0, 1.0); });
}

void SettingsViewModel::setMinP(double value)
{
    editSampling([&](SamplingSettings &s) { s.minP = std::clamp(value, 0.0, 1.0); });
}

void SettingsViewModel::setRepetitionPenalty(double value)
{
    editSampling([&](SamplingSettings &s) { s.repetitionPenalty = std::clamp(value, 1.0, 2.0); });
}

void SettingsViewModel::setSeed(int value)
{
    editSampling([&](SamplingSettings &s) { s.seed = std::max(-1, value); });
}

void SettingsViewModel::setMaxNewTokens(int value)
{
    editSampling([&](SamplingSettings &s) { s.maxNewTokens = std::clamp(value, 0, kMaxNewTokensLimit); });
}

void SettingsViewModel::setLastConversation(qint64 id)
{
    if (id == m_lastConversation)
        return;
    m_lastConversation = id;
    save();
}

void SettingsViewModel::setMaxChunkSize(int value)
{
    value = std::clamp(value, 64, 8192);
    if (value == m_maxChunkSize)
        return;
    m_maxChunkSize = value;
    save();
    Q_EMIT maxChunkSizeChanged();
}

void SettingsViewModel::setDraftTokens(int count)
{
    count = std::clamp(count, 0, kMaxDraftTokens);
    if (count == m_draftTokens)
        return;
    m_draftTokens = count;
    save();
    Q_EMIT draftTokensChanged();
}

void SettingsViewModel::setTheme(const QString &theme)
{
    if (!kThemes.contains(theme) || (theme == m_theme && theme == m_savedTheme))
        return;
    const bool changed = theme != m_theme;
    m_theme = m_savedTheme = theme;
    save();
    if (changed)
        Q_EMIT themeChanged();
}

void SettingsViewModel::setLanguage(const QString &language)
{
    if (!kLanguages.contains(language) || (language == m_language && language == m_savedLanguage))
        return;
    const bool changed = language != m_language;
    m_language = m_savedLanguage = language;
    save();
    if (changed)
        Q_EMIT languageChanged();
}

void SettingsViewModel::overrideTheme(const QString &theme)
{
    if (!kThemes.contains(theme) || theme == m_theme)
        return;
    m_theme = theme;
    Q_EMIT themeChanged();
}

void SettingsViewModel::overrideLanguage(const QString &language)
{
    if (!kLanguages.contains(language) || language == m_language)
        return;
    m_language = language;
    Q_EMIT languageChanged();
}

void SettingsViewModel::setFontSize(int points)
{
    points = std::clamp(points, 8, 24);
    if (points == m_fontSize)
        return;
    m_fontSize = points;
    save();
    Q_EMIT fontSizeChanged();
}

void SettingsViewModel::setTintDraftTokens(bool tint)
{
    if (tint == m_tintDraftTokens)
        return;
    m_tintDraftTokens = tint;
    save();
    Q_EMIT tintDraftTokensChanged();
}

QStringList SettingsViewModel::presetNames() const
{
    return {QStringLiteral("balanced"), QStringLiteral("precise"), QStringLiteral("creative")};
}

bool SettingsViewModel::applyPreset(const QString &name)
{
    if (!presetNames().contains(name))
        return false;
    SamplingSettings s = preset(name);
    s.seed = m_sampling.seed;
    s.maxNewTokens = m_sampling.maxNewTokens;
    setSampling(s);
    return true;
}

void SettingsViewModel::resetSampling()
{
    setSampling(SamplingSettings{});
}

void SettingsViewModel::setSampling(const SamplingSettings &sampling)
{
    const SamplingSettings &o = m_sampling;
    if (qFuzzyCompare(o.temperature + 1, sampling.temperature + 1) && o.topK == sampling.topK
        && qFuzzyCompare(o.topP + 1, sampling.topP + 1) && qFuzzyCompare(o.minP + 1, sampling.minP + 1)
        && qFuzzyCompare(o.repetitionPenalty, sampling.repetitionPenalty) && o.seed == sampling.seed
        && o.maxNewTokens == sampling.maxNewTokens)
        return;
    m_sampling = sampling;
    save();
    Q_EMIT samplingChanged();
}

void SettingsViewModel::setHubToken(const QString &token)
{
    const QString clean = token.trimmed();
    if (clean == m_hubToken)
        return;
    m_hubToken = clean;
    save();
    Q_EMIT hubTokenChanged();
}

void SettingsViewModel::setHubPendingDownload(const QVariantMap &download)
{
    if (download == m_hubPendingDownload)
        return;
    m_hubPendingDownload = download;
    save();
}

void SettingsViewModel::save()
{
    if (!m_settings)
        return;
    QSettings &s = *m_settings;
    s.setValue("sampling/temperature", m_sampling.temperature);
    s.setValue("sampling/topK", m_sampling.topK);
    s.setValue("sampling/topP", m_sampling.topP);
    s.setValue("sampling/minP", m_sampling.minP);
    s.setValue("sampling/repetitionPenalty", m_sampling.repetitionPenalty);
    s.setValue("sampling/seed", m_sampling.seed);
    s.setValue("sampling/maxNewTokens", m_sampling.maxNewTokens);
    s.setValue("chat/lastConversation", m_lastConversation);
    s.setValue("engine/maxChunkSize", m_maxChunkSize);
    s.setValue("engine/draftTokens", m_draftTokens);
    s.setValue("ui/theme", m_savedTheme);
    s.setValue("ui/language", m_savedLanguage);
    s.setValue("ui/fontSize", m_fontSize);
    s.setValue("ui/tintDraftTokens", m_tintDraftTokens);
    s.setValue("models/directory", m_modelsDirectory);
    s.setValue("models/folders", m_modelFolders);
    s.setValue("hub/token", m_hubToken);
    s.setValue("hub/pendingDownload", m_hubPendingDownload);
    QVariantMap templates;
    for (auto it = m_chatTemplates.cbegin(); it != m_chatTemplates.cend(); ++it)
        templates.insert(it.key(), it.value());
    s.setValue("models/chatTemplates", templates);
    QVariantMap drafts;
    for (auto it = m_draftModels.cbegin(); it != m_draftModels.cend(); ++it)
        drafts.insert(it.key(), it.value());
    s.setValue("models/draftModels", drafts);
    s.sync();
}
