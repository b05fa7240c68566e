using System;
using System.Collections.Generic;

namespace Demo.Greetings
{
    /// <summary>Says hello.</summary>
    [Serializable]
    public class Greeter
    {
        private readonly string _name;

        public Greeter(string name)
        {
            _name = name;
        }

        /// <summary>Build the greeting — ¡hola!</summary>
        public string Greet() => $"Hello, {_name}";
    }

    public interface IGreeter
    {
        string Greet();
    }

    public struct Point
    {
        public int X;
    }

    public enum Tone { Warm, Cold }
}
