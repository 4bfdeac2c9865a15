// User settings: sampling, chunk size, draft tokens, theme, language, font size, model folders,
// per-model chat templates and draft models. Stored in
// settings.ini in the data directory; every change is written at once.
#pragma once
#include <QHash>
#include <algorithm>
#include <QObject>
#include <QSettings>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>
#include <memory>

#include "services/inferencetypes.h"

class SettingsViewModel : public QObject
{
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("Created by the application")
    Q_PROPERTY(double temperature READ temperature WRITE setTemperature NOTIFY samplingChanged)
    Q_PROPERTY(int topK READ topK WRITE setTopK NOTIFY samplingChanged)
    Q_PROPERTY(double topP READ topP WRITE setTopP NOTIFY samplingChanged)
    Q_PROPERTY(double minP READ minP WRITE setMinP NOTIFY samplingChanged)
    Q_PROPERTY(double repetitionPenalty READ repetitionPenalty WRITE setRepetitionPenalty NOTIFY samplingChanged)
    Q_PROPERTY(int seed READ seed WRITE setSeed NOTIFY samplingChanged)
    Q_PROPERTY(int maxNewTokens READ maxNewTokens WRITE setMaxNewTokens NOTIFY samplingChanged)
    Q_PROPERTY(int maxChunkSize READ maxChunkSize WRITE setMaxChunkSize NOTIFY maxChunkSizeChanged)
    Q_PROPERTY(int draftTokens READ draftTokens WRITE setDraftTokens NOTIFY draftTokensChanged)
    Q_PROPERTY(QString theme READ theme WRITE setTheme NOTIFY themeChanged)
    Q_PROPERTY(QString language READ language WRITE setLanguage NOTIFY languageChanged)
    Q_PROPERTY(int fontSize READ fontSize WRITE setFontSize NOTIFY fontSizeChanged)
    Q_PROPERTY(bool tintDraftTokens READ tintDraftTokens WRITE setTintDraftTokens NOTIFY tintDraftTokensChanged)
    Q_PROPERTY(QStringList presetNames READ presetNames CONSTANT)
    Q_PROPERTY(QString modelsDirectory READ modelsDirectory WRITE setModelsDirectory NOTIFY modelFoldersChanged)
    Q_PROPERTY(QStringList modelFolders READ modelFolders NOTIFY modelFoldersChanged)
    Q_PROPERTY(QString hubToken READ hubToken WRITE setHubToken NOTIFY hubTokenChanged)
public:
    // `filePath` empty: settings live in memory only (tests).
    explicit SettingsViewModel(const QString &filePath = {}, QObject *parent = nullptr);

    SamplingSettings sampling() const { return m_sampling; }
    double temperature() const { return m_sampling.temperature; }
    void setTemperature(double value);
    int topK() const { return m_sampling.topK; }
    void setTopK(int value);
    double topP() const { return m_sampling.topP; }
    void setTopP(double value);
    double minP() const { return m_sampling.minP; }
    void setMinP(double value);
    double repetitionPenalty() const { return m_sampling.repetitionPenalty; }
    void setRepetitionPenalty(double value);
    int seed() const { return m_sampling.seed; }
    void setSeed(int value);
    // The longest reply in tokens (local engine and remote endpoints); 0: until the context is full.
    int maxNewTokens() const { return std::max(0, m_sampling.maxNewTokens); }
    void setMaxNewTokens(int value);
    static constexpr int kMaxNewTokensLimit = 131072;
    // The chat open when the app last closed (0: none).
    qint64 lastConversation() const { return m_lastConversation; }
    void setLastConversation(qint64 id);
    int maxChunkSize() const { return m_maxChunkSize; }
    void setMaxChunkSize(int value);
    // Tokens drafted per model pass for speculative decoding (0: off, at most 8): what the
    // draft-token sliders of the Settings and Models pages set (ModelManager::draftTokens), kept
    // here so that the count outlasts a restart.
    int draftTokens() const { return m_draftTokens; }
    void setDraftTokens(int count);
    QString theme() const { return m_theme; }
    void setTheme(const QString &theme);  // "light", "dark" or "system"
    QString language() const { return m_language; }
    void setLanguage(const QString &language);  // "en", "nl" or "de"
    // The theme and language for this run only (the command line's --theme / --lang): shown and
    // used, never saved; the saved choice stays for the next start unless the user picks another.
    void overrideTheme(const QString &theme);
    void overrideLanguage(const QString &language);
    int fontSize() const { return m_fontSize; }
    void setFontSize(int points);
    // The chat tints the text of accepted draft tokens in finished replies.
    bool tintDraftTokens() const { return m_tintDraftTokens; }
    void setTintDraftTokens(bool tint);
    QStringList presetNames() const;
    // Where model folders are looked for (empty: the default, <data dir>/models), and folders
    // the user added one by one. Each takes a path or a file:// URL (from a folder dialog).
    QString modelsDirectory() const { return m_modelsDirectory; }
    void setModelsDirectory(const QString &dir);
    QStringList modelFolders() const { return m_modelFolders; }
    Q_INVOKABLE void addModelFolder(const QString &dir);
    Q_INVOKABLE void removeModelFolder(const QString &dir);
    // Chat templates the user set per model (model folder path -> template text); a model without
    // one uses its own template (the built-in ChatML format when it ships none).
    QHash<QString, QString> chatTemplateOverrides() const { return m_chatTemplates; }
    Q_INVOKABLE QString chatTemplateOverride(const QString &modelPath) const;
    // Empty text removes the model's override.
    Q_INVOKABLE void setChatTemplateOverride(const QString &modelPath, const QString &text);

    // Draft models the user chose per model (model folder path -> draft model folder path); a
    // model without one drafts by n-gram lookup when draft tokens are on.
    QHash<QString, QString> draftModels() const { return m_draftModels; }
    Q_INVOKABLE QString draftModel(const QString &modelPath) const;
    // An empty draft path removes the model's choice.
    Q_INVOKABLE void setDraftModel(const QString &modelPath, const QString &draftPath);

    // The Hugging Face access token for gated and private repositories (empty: HF_TOKEN, else the
    // token file huggingface_hub writes, $HF_HOME/token, is used).
    QString hubToken() const { return m_hubToken; }
    void setHubToken(const QString &token);
    // The Hub download under way when the app last closed ({repo, revision, folder}; empty: none),
    // offered to resume at the next start.
    QVariantMap hubPendingDownload() const { return m_hubPendingDownload; }
    void setHubPendingDownload(const QVariantMap &download);

    // Sampling presets: "balanced", "precise", "creative".
    Q_INVOKABLE bool applyPreset(const QString &name);
    Q_INVOKABLE void resetSampling();

Q_SIGNALS:
    void samplingChanged();
    void maxChunkSizeChanged();
    void draftTokensChanged();
    void themeChanged();
    void languageChanged();
    void fontSizeChanged();
    void tintDraftTokensChanged();
    void modelFoldersChanged();
    void chatTemplatesChanged();
    void draftModelsChanged();
    void hubTokenChanged();

private:
    void setSampling(const SamplingSettings &sampling);
    // Applies one edit to a copy of the sampling settings and stores it (saved, signalled) if it changed.
    template <class Edit>
    void editSampling(Edit edit)
    {
        SamplingSettings s = m_sampling;
        edit(s);
        setSampling(s);
    }
    void save();

    std::unique_ptr<QSettings> m_settings;
    SamplingSettings m_sampling;
    int m_maxChunkSize = 2048;
    int m_draftTokens = 0;
    QString m_theme = QStringLiteral("system");
    QString m_language = QStringLiteral("en");
    QString m_savedTheme = m_theme;        // what save() writes (an override is not saved)
    QString m_savedLanguage = m_language;
    int m_fontSize = 11;
    bool m_tintDraftTokens = false;
    qint64 m_lastConversation = 0;
    QString m_modelsDirectory;
    QString m_hubToken;
    QVariantMap m_hubPendingDownload;
    QStringList m_modelFolders;
    QHash<QString, QString> m_chatTemplates;
    QHash<QString, QString> m_draftModels;
};
