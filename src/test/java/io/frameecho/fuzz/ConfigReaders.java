package io.frameecho.fuzz;

import io.vertx.core.json.JsonObject;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Map;

/**
 * The launcher's reader of {@code FRAME_ECHO_*} variables and {@code -conf}, {@code io.frameecho.cli.EnvironmentConfig},
 * which is package-private: called reflectively, its exceptions passed on as they are.
 */
final class ConfigReaders {

  private static final Method FROM_ENVIRONMENT = method("fromEnvironment", Map.class);
  private static final Method EFFECTIVE = method("effective", String.class, Map.class);

  private ConfigReaders() {
  }

  /** {@code EnvironmentConfig.fromEnvironment}: the overrides the variables hold. */
  static JsonObject fromEnvironment(Map<String, String> environment) {
    return invoke(FROM_ENVIRONMENT, environment);
  }

  /** {@code EnvironmentConfig.effective}: a {@code -conf} argument (file or inline JSON), then the variables. */
  static JsonObject effective(String confArgument, Map<String, String> environment) {
    return invoke(EFFECTIVE, confArgument, environment);
  }

  /** {@code EnvironmentConfig.oneLine}: how a variable's name is written in an error. */
  static String oneLine(String text) {
    return (String) invokeStatic(method("oneLine", String.class), text);
  }

  private static Method method(String name, Class<?>... parameters) {
    try {
      Method method = Class.forName("io.frameecho.cli.EnvironmentConfig").getDeclaredMethod(name, parameters);
      method.setAccessible(true);
      return method;
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("EnvironmentConfig." + name + " is not there to test", e);
    }
  }

  private static JsonObject invoke(Method method, Object... args) {
    return (JsonObject) invokeStatic(method, args);
  }

  private static Object invokeStatic(Method method, Object... args) {
    try {
      return method.invoke(null, args);
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof RuntimeException runtime) {
        throw runtime;
      }
      if (e.getCause() instanceof Error error) {
        throw error;
      }
      throw new IllegalStateException(e.getCause());
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    }
  }
}
