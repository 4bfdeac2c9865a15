// VramMeter: one GPU's stacked bar and legend from a TelemetryModel.gpus entry.
import QtQuick
import QtTest
import ExlStudio

Item {
    width: 800
    height: 200

    Component {
        id: meterComponent
        VramMeter { width: 800 }
    }

    TestCase {
        name: "VramMeter"
        when: windowShown

        function gpu(engine) {
            return engine ? { index: 1, name: "RTX 4090", engine: true, totalGiB: 24, usedGiB: 10,
                              weightsGiB: 5, cacheGiB: 2, otherGiB: 3, freeGiB: 14 }
                          : { index: 0, name: "RTX 3060", engine: false, totalGiB: 12, usedGiB: 3,
                              weightsGiB: 0, cacheGiB: 0, otherGiB: 3, freeGiB: 9 }
        }

        function test_engineGpu() {
            const meter = createTemporaryObject(meterComponent, parent, { gpu: gpu(true) })
            verify(meter)
            waitForRendering(meter)
            const label = findChild(meter, "gpuLabel")
            compare(label.text, "GPU 1 (RTX 4090, the engine's): 10.0 GiB of 24 GiB in use")
            // Widths in proportion to the parts (5, 2 and 3 of 24 GiB).
            const bar = findChild(meter, "weightsBar").parent
            fuzzyCompare(findChild(meter, "weightsBar").width, bar.width * 5 / 24, 0.5)
            fuzzyCompare(findChild(meter, "cacheBar").width, bar.width * 2 / 24, 0.5)
            fuzzyCompare(findChild(meter, "otherBar").width, bar.width * 3 / 24, 0.5)
            compare(findChild(meter, "legend").count, 4)  // weights, cache, other, free
        }

        function test_otherGpu() {
            const meter = createTemporaryObject(meterComponent, parent, { gpu: gpu(false) })
            verify(meter)
            compare(findChild(meter, "gpuLabel").text, "GPU 0 (RTX 3060): 3.0 GiB of 12 GiB in use")
            compare(findChild(meter, "weightsBar").width, 0)
            compare(findChild(meter, "legend").count, 2)  // other, free
        }
    }
}
