// The inference service the app runs today: the real worker thread, batching and
// cancellation around a scripted FakeGenerationBackend.
#pragma once
#include "fakegenerationbackend.h"
#include "workerinferenceservice.h"

class FakeInferenceService : public WorkerInferenceService
{
    Q_OBJECT
public:
    explicit FakeInferenceService(const QString &deviceName = QStringLiteral("cuda:0"), FakeTiming timing = {},
                                  QObject *parent = nullptr)
        : WorkerInferenceService(std::make_unique<FakeGenerationBackend>(deviceName, timing), parent)
    {
    }
};
