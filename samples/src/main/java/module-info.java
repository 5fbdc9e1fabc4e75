/**
 * Samples: the loader dropped into Java training loops. A named module so that javac holds it to the loader's
 * exported API; it also calls bytedeco's cuBLAS itself ({@code Cublas}, the GPU MLP's matrix products).
 */
module dev.gdsloader.samples {
    requires dev.gdsloader.loader;
    requires org.bytedeco.cuda;
    requires java.logging;
}
