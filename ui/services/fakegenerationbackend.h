// A scripted stand-in for the engine, used by the app until the engine's generation API
// lands, by tests and by the screenshots: a fixed model list, load progress, realistic
// prefill and decode timing, and made-up but plausible memory figures.
#pragma once
#include <QElapsedTimer>
#include <QStringList>

#include "generationbackend.h"

struct FakeTiming {
    double prefillTokensPerSecond = 900.0;
    double decodeTokensPerSecond = 45.0;  // 0: no delay at all (tests)
    int loadSteps = 10;
    int loadStepMs = 40;
    int replyRepeats = 1;  // how many times the scripted reply is repeated
};

class FakeGenerationBackend : public GenerationBackend
{
public:
    explicit FakeGenerationBackend(QString deviceName = QStringLiteral("cuda:0"), FakeTiming timing = {});

    QString deviceName() const override { return m_deviceName; }
    QList<ModelInfo> availableModels() const override;
    LoadResult load(const QString &path, const LoadOptions &options,
                    const std::function<void(double)> &progress) override;
    void unload() override;
    bool loaded() const override { return m_loaded.has_value(); }
    PrefillResult prefill(const QList<ChatTurn> &conversation, const SamplingSettings &settings) override;
    std::optional<DecodedPiece> decodeStep() override;
    VramUsage vram() const override;
    double powerWatts() const override;
    double energyJoules() const override;
    GpuStatus gpuStatus() const override;
    double boundTokensPerSecond() const override;

    // A model whose load always fails with an out-of-memory error (for error handling).
    static QString tooLargeModelPath() { return QStringLiteral("/models/fake/Llama-3-70B-exl2-8.0bpw"); }
    // How many tokens one copy of the scripted reply streams as.
    static int scriptTokenCount();

private:
    QElapsedTimer m_energyClock;
    QElapsedTimer m_decodeClock;  // since the end of the prefill: decode steps keep to its schedule
    static void sleepSeconds(double seconds);

    QString m_deviceName;
    FakeTiming m_timing;
    std::optional<ModelInfo> m_loaded;
    LoadOptions m_options;
    QStringList m_pieces;
    int m_next = 0;
};
