// Beam's Flink job server (LoopbackJobServer's) that sends no jar with a job. Beam's FlinkJobInvoker
// stages every entry of the job server's classpath (161 jars, 152 MB) to Flink's BlobServer with
// each job: the job server scans and uploads them, and each TaskManager downloads them and loads
// Beam's classes afresh in the job's class loader, 12-16 s a job on this machine. The cluster of
// engines/flink.py has Beam's jars on its JobManager's and TaskManagers' own classpath instead
// (loaded once per process), so each job is its pipeline alone. Usage: `java UnstagedFlinkJobServer
// org.apache.beam.runners.flink.FlinkJobServerDriver <driver flags>`.

import java.lang.reflect.Field;
import java.util.Collections;
import org.apache.beam.model.pipeline.v1.RunnerApi;
import org.apache.beam.runners.flink.FlinkJobInvoker;
import org.apache.beam.runners.flink.FlinkJobServerDriver.FlinkServerConfiguration;
import org.apache.beam.runners.jobsubmission.JobInvocation;
import org.apache.beam.runners.jobsubmission.JobServerDriver;
import org.apache.beam.sdk.util.construction.resources.PipelineResourcesDetector;
import org.apache.beam.vendor.grpc.v1p60p1.com.google.protobuf.Struct;
import org.apache.beam.vendor.grpc.v1p60p1.com.google.protobuf.Value;
import org.apache.beam.vendor.guava.v32_1_2_jre.com.google.common.util.concurrent.ListeningExecutorService;

public final class UnstagedFlinkJobServer {
  private static final String DETECTOR_OPTION =
      "beam:option:pipeline_resources_detector_factory_class:v1";

  /** Beam's pipeline resources detector, finding no file to stage. */
  public static final class NoFiles implements PipelineResourcesDetector.Factory {
    public static NoFiles create() { // how Beam instantiates the option's class
      return new NoFiles();
    }

    @Override
    public PipelineResourcesDetector getPipelineResourcesDetector() {
      return classLoader -> Collections.<String>emptyList();
    }
  }

  public static void main(String[] args) throws Exception {
    JobServerDriver driver = LoopbackJobServer.loopback(args);
    FlinkServerConfiguration configuration = (FlinkServerConfiguration) driver.configuration;
    JobServerDriver.JobInvokerFactory invokers =
        () ->
            new FlinkJobInvoker(configuration) {
              @Override
              protected JobInvocation invokeWithExecutor(
                  RunnerApi.Pipeline pipeline,
                  Struct options,
                  String retrievalToken,
                  ListeningExecutorService executor) {
                Value noFiles = Value.newBuilder().setStringValue(NoFiles.class.getName()).build();
                Struct unstaged = options.toBuilder().putFields(DETECTOR_OPTION, noFiles).build();
                return super.invokeWithExecutor(pipeline, unstaged, retrievalToken, executor);
              }
            };
    Field field = JobServerDriver.class.getDeclaredField("jobInvokerFactory");
    field.setAccessible(true);
    field.set(driver, invokers);
    driver.run();
  }
}
